#include "base/memory_account.h"

namespace ember {
namespace {

thread_local MemoryAccount* current_account = nullptr;

}  // namespace

MemoryAccount* MemoryAccount::Current() { return current_account; }

ScopedMemoryAccount::ScopedMemoryAccount(MemoryAccount* account) : previous_(current_account) {
  current_account = account;
}

ScopedMemoryAccount::~ScopedMemoryAccount() { current_account = previous_; }

}  // namespace ember
