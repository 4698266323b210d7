// The persistent kernel cache's files: what is written reads back, and a missing, truncated,
// bit-flipped or foreign entry reads as a miss (never a crash); writes leave no temporary files
// and an unwritable directory is an error, not a crash.
#include "compiler/codegen/kernel_disk_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace ember::codegen {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("ember_kcache_", name, "_", getpid());
  fs::remove_all(dir);
  return dir;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// The single entry file in `dir`.
fs::path OnlyEntry(const fs::path& dir) {
  fs::path found;
  int count = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    found = e.path();
    ++count;
  }
  EXPECT_EQ(count, 1);
  return found;
}

TEST(KernelDiskCacheTest, WriteThenRead) {
  const fs::path dir = FreshDir("roundtrip") / "nested";  // created by the write
  const std::string object = RandomBytes(5000, 1);
  EXPECT_FALSE(ReadCachedKernels(dir.string(), "abc123").has_value());
  ASSERT_TRUE(WriteCachedKernels(dir.string(), "abc123", object).ok());
  std::optional<std::string> back = ReadCachedKernels(dir.string(), "abc123");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, object);
  EXPECT_FALSE(ReadCachedKernels(dir.string(), "abc124").has_value());
  OnlyEntry(dir);  // no temporary file left behind
  // Overwriting replaces the entry.
  const std::string other = RandomBytes(300, 2);
  ASSERT_TRUE(WriteCachedKernels(dir.string(), "abc123", other).ok());
  EXPECT_EQ(ReadCachedKernels(dir.string(), "abc123").value_or(""), other);
  fs::remove_all(dir.parent_path());
}

TEST(KernelDiskCacheTest, DamagedEntriesReadAsMisses) {
  const fs::path dir = FreshDir("damaged");
  const std::string object = RandomBytes(4096, 3);
  auto rewrite = [&](const std::string& bytes) {
    std::ofstream(OnlyEntry(dir), std::ios::binary | std::ios::trunc) << bytes;
  };
  ASSERT_TRUE(WriteCachedKernels(dir.string(), "k", object).ok());
  std::string good;
  {
    std::ifstream in(OnlyEntry(dir), std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(good.size(), object.size());
  const KernelCacheCounters before = GetKernelCacheCounters();
  std::mt19937_64 rng(4);
  int damaged = 0;
  // Truncations at every length class, single bit flips anywhere, garbage and an empty file.
  for (size_t cut : {size_t{0}, size_t{3}, size_t{8}, size_t{20}, good.size() / 2,
                     good.size() - 1}) {
    rewrite(good.substr(0, cut));
    EXPECT_FALSE(ReadCachedKernels(dir.string(), "k").has_value()) << "cut at " << cut;
    ++damaged;
  }
  for (int i = 0; i < 40; ++i) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
    rewrite(bad);
    EXPECT_FALSE(ReadCachedKernels(dir.string(), "k").has_value()) << "flip at " << at;
    ++damaged;
  }
  rewrite(good + "x");
  EXPECT_FALSE(ReadCachedKernels(dir.string(), "k").has_value());
  rewrite(RandomBytes(good.size(), 5));
  EXPECT_FALSE(ReadCachedKernels(dir.string(), "k").has_value());
  damaged += 2;
  const KernelCacheCounters after = GetKernelCacheCounters();
  EXPECT_EQ(after.corrupt - before.corrupt, damaged);
  EXPECT_EQ(after.hits, before.hits);
  // The next write repairs it.
  ASSERT_TRUE(WriteCachedKernels(dir.string(), "k", object).ok());
  EXPECT_EQ(ReadCachedKernels(dir.string(), "k").value_or(""), object);
  fs::remove_all(dir);
}

TEST(KernelDiskCacheTest, BadKeysAndDirectories) {
  const fs::path dir = FreshDir("bad");
  EXPECT_FALSE(WriteCachedKernels(dir.string(), "../escape", "x").ok());
  EXPECT_FALSE(WriteCachedKernels(dir.string(), "", "x").ok());
  EXPECT_FALSE(ReadCachedKernels(dir.string(), "a/b").has_value());
  // A regular file where the directory should be.
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "not a directory";
  EXPECT_FALSE(WriteCachedKernels((dir / "file").string(), "k", "x").ok());
  EXPECT_FALSE(ReadCachedKernels((dir / "file").string(), "k").has_value());
  // A directory where the entry should be.
  fs::create_directories(dir / "d" / "k.o.cache");
  EXPECT_FALSE(ReadCachedKernels((dir / "d").string(), "k").has_value());
  EXPECT_FALSE(WriteCachedKernels((dir / "d").string(), "k", "x").ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ember::codegen
