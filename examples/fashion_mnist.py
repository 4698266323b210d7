"""Fashion-MNIST from Debian's dataset-fashion-mnist package (IDX files, optionally gzipped), as
float32 images in [0, 1] flattened to 784 values and int32 labels; used by the main jobs (JAX and
TensorFlow) and the TensorFlow tests."""
import gzip
import pathlib
import struct

import numpy as np

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """Reads an IDX file (optionally gzipped): big-endian magic, dims, then uint8 data."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, rank = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(f">{rank}I", data[4:4 + 4 * rank])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(data_dir):
    d = pathlib.Path(data_dir)

    def find(stem):
        for name in (stem + ".gz", stem):
            if (d / name).exists():
                return d / name
        raise FileNotFoundError(f"{d / stem}(.gz) not found: install dataset-fashion-mnist")

    x_train = read_idx(find("train-images-idx3-ubyte")).reshape(-1, 784).astype(np.float32) / 255
    y_train = read_idx(find("train-labels-idx1-ubyte")).astype(np.int32)
    x_test = read_idx(find("t10k-images-idx3-ubyte")).reshape(-1, 784).astype(np.float32) / 255
    y_test = read_idx(find("t10k-labels-idx1-ubyte")).astype(np.int32)
    return x_train, y_train, x_test, y_test
