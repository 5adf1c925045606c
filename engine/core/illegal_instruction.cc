#include "core/illegal_instruction.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace kimi {
namespace {

thread_local sigjmp_buf* t_resume = nullptr;  // set while this thread runs a guarded function

std::mutex g_install_mutex;
int g_guarded_threads = 0;   // guarded calls under way; the handler is installed while > 0
struct sigaction g_previous;  // the disposition before the first of them

void OnIllegalInstruction(int signal, siginfo_t* info, void* context) {
  if (t_resume != nullptr) siglongjmp(*t_resume, 1);
  // Another thread's SIGILL: as the previous disposition would have had it.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction != nullptr) return g_previous.sa_sigaction(signal, info, context);
  } else if (g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != SIG_DFL) {
    return g_previous.sa_handler(signal);
  }
  ::signal(SIGILL, SIG_DFL);
  ::raise(SIGILL);
}

void Install() {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (g_guarded_threads++ > 0) return;
  struct sigaction action {};
  action.sa_sigaction = OnIllegalInstruction;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGILL, &action, &g_previous);
}

void Uninstall() {
  std::lock_guard<std::mutex> lock(g_install_mutex);
  if (--g_guarded_threads == 0) sigaction(SIGILL, &g_previous, nullptr);
}

}  // namespace

bool RunUnlessIllegalInstruction(void (*fn)(void*), void* arg) {
  Install();
  sigjmp_buf resume;
  if (sigsetjmp(resume, /*savemask=*/1) != 0) {  // fn raised SIGILL; the mask is as before
    t_resume = nullptr;
    Uninstall();
    return false;
  }
  t_resume = &resume;
  fn(arg);
  t_resume = nullptr;
  Uninstall();
  return true;
}

}  // namespace kimi
