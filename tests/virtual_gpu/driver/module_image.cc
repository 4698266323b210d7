#include "tests/virtual_gpu/driver/module_image.h"

#include <cstdlib>
#include <list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/ptx_compiler.h"
#include "tests/virtual_gpu/ptx/ptx_parser.h"

namespace ember::vgpu {
namespace {

constexpr size_t kCacheEntries = 64;

absl::StatusOr<std::shared_ptr<const ModuleImage>> Build(const std::string& text) {
  auto image = std::make_shared<ModuleImage>();
  image->text = text;
  EMBER_ASSIGN_OR_RETURN(image->ast, ptx::ParseModule(text));
  const std::string& target = image->ast.target;
  if (target.rfind("sm_", 0) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported .target '", target, "'"));
  }
  image->target_sm = std::atoi(target.c_str() + 3);
  image->arch_specific = !target.empty() && (target.back() == 'a' || target.back() == 'f');
  image->ptx_version = image->ast.version_major * 10 + image->ast.version_minor;
  for (const ptx::Function& f : image->ast.functions) {
    if (!f.is_entry || f.is_declaration) continue;
    absl::StatusOr<std::unique_ptr<ptx::KernelProgram>> program =
        ptx::CompileKernel(image->ast, f.name);
    if (!program.ok()) {
      return absl::Status(program.status().code(),
                          absl::StrCat("kernel '", f.name, "': ", program.status().message()));
    }
    image->kernels[f.name] = std::shared_ptr<const ptx::KernelProgram>(std::move(*program));
  }
  return image;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ModuleImage>> LoadModuleImage(const std::string& text) {
  static absl::Mutex mu(absl::kConstInit);
  static std::list<std::shared_ptr<const ModuleImage>> entries;
  std::list<std::shared_ptr<const ModuleImage>>* cache = &entries;
  {
    absl::MutexLock lock(&mu);
    for (auto it = cache->begin(); it != cache->end(); ++it) {
      if ((*it)->text == text) {
        cache->splice(cache->begin(), *cache, it);
        return cache->front();
      }
    }
  }
  EMBER_ASSIGN_OR_RETURN(std::shared_ptr<const ModuleImage> image, Build(text));
  absl::MutexLock lock(&mu);
  cache->push_front(image);
  if (cache->size() > kCacheEntries) cache->pop_back();
  return image;
}

}  // namespace ember::vgpu
