#include "core/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace aclnn_cpu {
namespace {

struct LogSettings {
  std::atomic<int> level{static_cast<int>(LogLevel::kNone)};
  std::atomic<bool> to_stdout{false};
  std::atomic<bool> verbose{false};
  std::once_flag once;
};

LogSettings& Settings() {
  static LogSettings s;
  return s;
}

void Load(LogSettings& s) {
  // Printing is opt-in, as in CANN (whose default writes log files, not the terminal): a level
  // from ASCEND_GLOBAL_LOG_LEVEL, or the default level 3 (error) once
  // ASCEND_SLOG_PRINT_TO_STDOUT=1 asks for output on stdout.
  const char* lvl = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  const char* out = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
  bool to_stdout = out != nullptr && out[0] == '1';
  int level = static_cast<int>(LogLevel::kNone);
  if (lvl != nullptr && lvl[0] >= '0' && lvl[0] <= '4' && lvl[1] == '\0') {
    level = lvl[0] - '0';
  } else if (to_stdout) {
    level = static_cast<int>(LogLevel::kError);
  }
  s.level.store(level);
  s.to_stdout.store(to_stdout);
  const char* verbose = std::getenv("ACLNN_CPU_VERBOSE");
  s.verbose.store(verbose != nullptr && verbose[0] != '\0' &&
                  !(verbose[0] == '0' && verbose[1] == '\0'));
}

LogSettings& Loaded() {
  LogSettings& s = Settings();
  std::call_once(s.once, [&s] { Load(s); });
  return s;
}

}  // namespace

bool LogEnabled(LogLevel level) {
  int cur = Loaded().level.load(std::memory_order_relaxed);
  return cur < static_cast<int>(LogLevel::kNone) && static_cast<int>(level) >= cur;
}

void ReloadLogSettings() {
  Loaded();
  Load(Settings());
}

void LogMessage(LogLevel level, const char* fmt, ...) {
  if (!LogEnabled(level)) return;
  static const char* const kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::FILE* f = Loaded().to_stdout.load() ? stdout : stderr;
  std::fprintf(f, "[%s] aclnn-cpu: %s\n", kNames[static_cast<int>(level)], buf);
}

bool VerboseEnabled() { return Loaded().verbose.load(std::memory_order_relaxed); }

void VerboseLine(const char* fmt, ...) {
  // One fprintf per line (stdio locks the stream per call), so lines of concurrent streams do
  // not interleave.
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "aclnn_cpu_verbose,%s\n", buf);
}

}  // namespace aclnn_cpu
