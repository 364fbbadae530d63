// Diagnostics controlled by ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 4 none) and
// ASCEND_SLOG_PRINT_TO_STDOUT, as in CANN.
#ifndef ACLNN_CPU_CORE_LOG_H_
#define ACLNN_CPU_CORE_LOG_H_

namespace aclnn_cpu {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kNone = 4 };

// True when messages of `level` are printed.
bool LogEnabled(LogLevel level);
void LogMessage(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Re-reads the environment (aclInit and tests call it).
void ReloadLogSettings();

// ACLNN_CPU_VERBOSE=1 (as ONEDNN_VERBOSE): one line on stderr per operator execution,
// "aclnn_cpu_verbose,exec,<operator>,<plan>,<ok or the error>,<milliseconds>", and one per
// refused call, "aclnn_cpu_verbose,error,<status>,<message>". Read once, and again by
// ReloadLogSettings.
bool VerboseEnabled();
void VerboseLine(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace aclnn_cpu

#endif  // ACLNN_CPU_CORE_LOG_H_
