// The XLA_Shape trees of TensorFlow's device shape function (TFNPD_XlaShapeToDeviceShape-
// Representation): a checked deep copy that follows TF's ownership rules (lists longer than the
// inline capacity and tuple element arrays come from array new, since TF frees them with
// delete[]), and the matching destroy for shapes Ember filled.
#ifndef EMBER_PJRT_PLUGIN_TF_XLA_SHAPE_H_
#define EMBER_PJRT_PLUGIN_TF_XLA_SHAPE_H_

#include "absl/status/status.h"
#include "pjrt_plugin/include/tf_plugin_c_api.h"

namespace ember::pjrt {

// Fills `to` (whose previous contents are ignored, not freed) with a deep copy of `from`. A
// malformed input (negative or absurd list sizes, a null heap pointer, tuples nested too deep)
// is an InvalidArgument error naming the field; `to` is then left empty and owns nothing.
absl::Status CopyXlaShape(const XLA_Shape& from, XLA_Shape& to);

// Frees what CopyXlaShape allocated in `shape` (as TF does) and leaves it empty.
void DestroyXlaShape(XLA_Shape& shape);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_TF_XLA_SHAPE_H_
