// mori/utils/mori_log.hpp for emud: MORI's host-side module logging
// (MORI_APP_INFO and the other MORI_<MODULE>_<LEVEL> macros, MORI_LOG,
// MORI_TIMER, mori::ModuleLogger), so a test program that includes it
// builds with emud c++. Written for emud from the names and behaviour of
// MORI's public header include/mori/utils/mori_log.hpp
// (github.com/ROCm/mori); it is not MORI's header and contains none of its
// code.
//
// Behaviour, as MORI's: a module's level is ERROR unless
// MORI_<MODULE>_LOG_LEVEL (MORI_APP_LOG_LEVEL for the application module)
// or MORI_GLOBAL_LOG_LEVEL says otherwise (trace, debug, info, warn, error,
// critical; anything else is error), the module's variable first; a
// message at or above its module's level is one line on stdout,
// "[date time.ms] [pid] [module] [level] text"; the text is a format in
// the {fmt} style, each "{}" the next argument.
//
// Differences from MORI's header, all deliberate:
//   - no spdlog: GetLogger returns a std::shared_ptr<mori::Logger>, which
//     has spdlog's logging calls (trace ... critical, set_level, level,
//     should_log) but is not spdlog::logger; code that names spdlog's
//     types does not build;
//   - the format understands "{}", "{N}" (argument N), "{{", "}}" and the
//     specs [fill]align, '+', '#', '0', width, .precision and one of
//     d x X o b e f g s p c; an argument with no operator<< does not
//     build; a format with more fields than arguments prints the field
//     as "{?}" instead of throwing;
//   - MORI_TIMER measures host wall time (std::chrono::steady_clock), not
//     emulated time.
// Logging is host code: emud neither orders nor records it.
#ifndef EMUD_MORI_LOG_HPP
#define EMUD_MORI_LOG_HPP

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unistd.h>

namespace mori {

namespace modules {
constexpr const char* APPLICATION = "application";
constexpr const char* IO = "io";
constexpr const char* SHMEM = "shmem";
constexpr const char* CORE = "core";
constexpr const char* OPS = "ops";
constexpr const char* UMBP = "umbp";
constexpr const char* METRICS = "metrics";
}  // namespace modules

namespace logdetail {

// One argument of a message, formatted by a spec such as "08x" or ">10.3f".
struct Arg {
  const void* p;
  void (*put)(std::ostream&, const void*, char type);
};

template <typename T>
void putArg(std::ostream& os, const void* p, char type) {
  const T& v = *static_cast<const T*>(p);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (type == 'c') {
      os << static_cast<char>(v);
      return;
    }
    if (type == 'b') {
      using U = std::make_unsigned_t<T>;
      U u = static_cast<U>(v);
      std::string bits;
      do {
        bits.insert(bits.begin(), char('0' + (u & 1)));
        u >>= 1;
      } while (u);
      if (os.flags() & std::ios::showbase) bits = "0b" + bits;
      os << bits;
      return;
    }
    if constexpr (sizeof(T) == 1 && !std::is_same_v<T, char>) {
      os << static_cast<int>(v);  // a number, as {fmt} prints int8_t; a char prints as itself
      return;
    }
  }
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
    return;
  }
  os << v;
}

inline void applySpec(std::ostream& os, std::string_view spec, char* type) {
  size_t i = 0;
  auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^'; };
  char align = 0;
  if (spec.size() >= 2 && isAlign(spec[1])) {
    os << std::setfill(spec[0]);
    align = spec[1];
    i = 2;
  } else if (!spec.empty() && isAlign(spec[0])) {
    align = spec[0];
    i = 1;
  }
  if (align == '<') os << std::left;
  if (align == '>' || align == '^') os << std::right;  // centring is shown right-aligned
  if (i < spec.size() && spec[i] == '+') {
    os << std::showpos;
    i++;
  }
  if (i < spec.size() && spec[i] == '#') {
    os << std::showbase;
    i++;
  }
  if (i < spec.size() && spec[i] == '0') {
    if (!align) os << std::setfill('0') << std::internal;
    i++;
  }
  int width = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) width = width * 10 + (spec[i++] - '0');
  if (width) os << std::setw(width);
  if (i < spec.size() && spec[i] == '.') {
    int prec = 0;
    i++;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) prec = prec * 10 + (spec[i++] - '0');
    os << std::setprecision(prec);
  }
  *type = i < spec.size() ? spec[i] : 0;
  switch (*type) {
    case 'x': os << std::hex; break;
    case 'X': os << std::hex << std::uppercase; break;
    case 'o': os << std::oct; break;
    case 'e': os << std::scientific; break;
    case 'f': os << std::fixed; break;
    default: break;
  }
}

inline std::string format(std::string_view f, const Arg* args, size_t n) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); i++) {
    char c = f[i];
    if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}';
      i++;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      i++;
      continue;
    }
    size_t end = f.find('}', i);
    if (end == std::string_view::npos) {
      out.append(f.substr(i));
      break;
    }
    std::string_view field = f.substr(i + 1, end - i - 1);
    size_t colon = field.find(':');
    std::string_view id = field.substr(0, colon);
    std::string_view spec = colon == std::string_view::npos ? std::string_view() : field.substr(colon + 1);
    size_t k = next;
    if (!id.empty()) {
      k = 0;
      for (char d : id) k = k * 10 + size_t(d - '0');
    } else {
      next++;
    }
    if (k >= n) {
      out += "{?}";
    } else {
      std::ostringstream os;
      char type = 0;
      applySpec(os, spec, &type);
      args[k].put(os, args[k].p, type);
      out += os.str();
    }
    i = end;
  }
  return out;
}

}  // namespace logdetail

// Logger: one module's level and output, with spdlog's logging calls.
class Logger {
 public:
  enum Lvl { trace_l = 0, debug_l, info_l, warn_l, err_l, critical_l, off_l };

  explicit Logger(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_level(int level) { level_ = level; }
  int level() const { return level_; }
  bool should_log(int level) const { return level >= level_; }

  template <typename... A> void trace(std::string_view f, const A&... a) { log(trace_l, f, a...); }
  template <typename... A> void debug(std::string_view f, const A&... a) { log(debug_l, f, a...); }
  template <typename... A> void info(std::string_view f, const A&... a) { log(info_l, f, a...); }
  template <typename... A> void warn(std::string_view f, const A&... a) { log(warn_l, f, a...); }
  template <typename... A> void error(std::string_view f, const A&... a) { log(err_l, f, a...); }
  template <typename... A> void critical(std::string_view f, const A&... a) { log(critical_l, f, a...); }

  template <typename... A>
  void log(int level, std::string_view f, const A&... a) {
    if (!should_log(level)) return;
    logdetail::Arg args[sizeof...(A) + 1] = {{&a, &logdetail::putArg<A>}...};
    std::string text = logdetail::format(f, args, sizeof...(A));
    using namespace std::chrono;
    auto now = system_clock::now();
    std::time_t t = system_clock::to_time_t(now);
    std::tm tm{};
    localtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    int ms = int(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
    static const char* const names[] = {"trace", "debug", "info", "warning", "error", "critical", "off"};
    std::printf("[%s.%03d] [%d] [%s] [%s] %s\n", when, ms, int(getpid()), name_.c_str(), names[level], text.c_str());
    std::fflush(stdout);
  }

 private:
  std::string name_;
  int level_ = err_l;
};

// ModuleLogger: the process's module loggers and their levels.
class ModuleLogger {
 public:
  enum class Level { TRACE = 0, DEBUG = 1, INFO = 2, WARN = 3, ERROR = 4, CRITICAL = 5 };

  static ModuleLogger& GetInstance() {
    static ModuleLogger one;
    return one;
  }

  void InitModule(const std::string& module, Level level = Level::ERROR) {
    std::lock_guard<std::mutex> g(mu_);
    initLocked(module, level);
  }

  std::shared_ptr<Logger> GetLogger(const std::string& module) {
    std::lock_guard<std::mutex> g(mu_);
    return getLocked(module);
  }

  // SetModuleLevel leaves a module its environment variable set alone
  // (ForceSetModuleLevel does not), and says so on the application logger.
  void SetModuleLevel(const std::string& module, Level level) {
    std::lock_guard<std::mutex> g(mu_);
    if (env_.count(module)) {
      getLocked(modules::APPLICATION)
          ->warn("Attempted to change log level for module '{}' which is controlled by environment variable. "
                 "Use ForceSetModuleLevel() to override.",
                 module);
      return;
    }
    getLocked(module)->set_level(int(level));
  }

  void ForceSetModuleLevel(const std::string& module, Level level) {
    std::lock_guard<std::mutex> g(mu_);
    getLocked(module)->set_level(int(level));
  }

  void SetModuleLevelInternal(const std::string& module, Level level, bool fromEnv = false) {
    std::lock_guard<std::mutex> g(mu_);
    getLocked(module)->set_level(int(level));
    if (fromEnv) env_[module] = level;
  }

  void SetGlobalLevel(Level level) {
    std::lock_guard<std::mutex> g(mu_);
    global_ = level;
    globalSet_ = true;
    for (auto& [name, l] : loggers_)
      if (!env_.count(name)) l->set_level(int(level));
  }

  Level GetGlobalLevel() const {
    std::lock_guard<std::mutex> g(mu_);
    return global_;
  }
  bool IsGlobalLevelSet() const {
    std::lock_guard<std::mutex> g(mu_);
    return globalSet_;
  }
  void ClearGlobalLevel() {
    std::lock_guard<std::mutex> g(mu_);
    globalSet_ = false;
  }
  bool HasEnvOverride(const std::string& module) const {
    std::lock_guard<std::mutex> g(mu_);
    return env_.count(module) != 0;
  }
  void ClearEnvOverride(const std::string& module) {
    std::lock_guard<std::mutex> g(mu_);
    env_.erase(module);
  }

  Level LevelFromString(const std::string& s) const {
    std::string l = s;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (l == "trace") return Level::TRACE;
    if (l == "debug") return Level::DEBUG;
    if (l == "info") return Level::INFO;
    if (l == "warn") return Level::WARN;
    if (l == "critical") return Level::CRITICAL;
    return Level::ERROR;
  }

  template <typename F>
  void ForEachLogger(F&& fn) {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [name, l] : loggers_) fn(name, l);
  }

 private:
  ModuleLogger() {
    if (const char* v = std::getenv("MORI_GLOBAL_LOG_LEVEL")) {
      global_ = LevelFromString(v);
      globalSet_ = true;
    }
    for (const char* m : {modules::APPLICATION, modules::IO, modules::SHMEM, modules::CORE, modules::OPS,
                          modules::UMBP, modules::METRICS})
      initLocked(m, Level::ERROR);
  }

  void initLocked(const std::string& module, Level level) {
    auto& l = loggers_[module];
    if (!l) l = std::make_shared<Logger>(module);
    std::string var = module == modules::APPLICATION ? "MORI_APP_LOG_LEVEL" : "MORI_" + module + "_LOG_LEVEL";
    std::transform(var.begin(), var.end(), var.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (const char* v = std::getenv(var.c_str())) {
      level = LevelFromString(v);
      env_[module] = level;
    } else if (globalSet_) {
      level = global_;
    }
    l->set_level(int(level));
  }

  std::shared_ptr<Logger> getLocked(const std::string& module) {
    auto it = loggers_.find(module);
    if (it != loggers_.end()) return it->second;
    initLocked(module, Level::ERROR);
    return loggers_[module];
  }

  std::unordered_map<std::string, std::shared_ptr<Logger>> loggers_;
  std::unordered_map<std::string, Level> env_;
  Level global_ = Level::ERROR;
  bool globalSet_ = false;
  mutable std::mutex mu_;
};

// ScopedTimer logs, at debug level, how long its scope took in host time.
class ScopedTimer {
 public:
  using Clock = std::chrono::steady_clock;

  ScopedTimer(std::string_view name, Logger& logger) {
    if (logger.should_log(Logger::debug_l)) {
      logger_ = &logger;
      name_.assign(name);
      start_ = Clock::now();
    }
  }
  explicit ScopedTimer(const std::string& name, const std::string& module = modules::APPLICATION)
      : ScopedTimer(name, *ModuleLogger::GetInstance().GetLogger(module)) {}
  ~ScopedTimer() {
    if (logger_) {
      long long ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
      logger_->debug("ScopedTimer [{}] took {} ns", name_, ns);
    }
  }
  double ElapsedSeconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Logger* logger_ = nullptr;
  std::string name_;
  Clock::time_point start_ = Clock::now();
};

inline void InitializeLogging() {
  auto& m = ModuleLogger::GetInstance();
  for (const char* mod : {modules::APPLICATION, modules::IO, modules::SHMEM, modules::CORE, modules::OPS,
                          modules::UMBP, modules::METRICS})
    m.InitModule(mod);
}

inline void InitializeLogging(const std::string& globalLevel) {
  InitializeLogging();
  auto& m = ModuleLogger::GetInstance();
  m.SetGlobalLevel(m.LevelFromString(globalLevel));
}

inline void InitializeLoggingFromEnv() {
  InitializeLogging();
  auto& m = ModuleLogger::GetInstance();
  if (const char* v = std::getenv("MORI_GLOBAL_LOG_LEVEL")) {
    m.SetGlobalLevel(m.LevelFromString(v));
    m.GetLogger(modules::APPLICATION)->info("Set global MORI log level to {} from MORI_GLOBAL_LOG_LEVEL", v);
  }
}

}  // namespace mori

#define MORI_GET_LOGGER(module) ::mori::ModuleLogger::GetInstance().GetLogger(module)

// One lookup per call site, as MORI's macro caches it.
#define MORI_LOG(module, level, ...)                                                          \
  do {                                                                                        \
    static const auto emud_mori_logger_ = ::mori::ModuleLogger::GetInstance().GetLogger(module); \
    emud_mori_logger_->level(__VA_ARGS__);                                                    \
  } while (0)

#define MORI_TRACE(module, ...) MORI_LOG(module, trace, __VA_ARGS__)
#define MORI_DEBUG(module, ...) MORI_LOG(module, debug, __VA_ARGS__)
#define MORI_INFO(module, ...) MORI_LOG(module, info, __VA_ARGS__)
#define MORI_WARN(module, ...) MORI_LOG(module, warn, __VA_ARGS__)
#define MORI_ERROR(module, ...) MORI_LOG(module, error, __VA_ARGS__)
#define MORI_CRITICAL(module, ...) MORI_LOG(module, critical, __VA_ARGS__)

#define MORI_APP_TRACE(...) MORI_TRACE(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_APP_DEBUG(...) MORI_DEBUG(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_APP_INFO(...) MORI_INFO(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_APP_WARN(...) MORI_WARN(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_APP_ERROR(...) MORI_ERROR(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_APP_CRITICAL(...) MORI_CRITICAL(::mori::modules::APPLICATION, __VA_ARGS__)
#define MORI_IO_TRACE(...) MORI_TRACE(::mori::modules::IO, __VA_ARGS__)
#define MORI_IO_DEBUG(...) MORI_DEBUG(::mori::modules::IO, __VA_ARGS__)
#define MORI_IO_INFO(...) MORI_INFO(::mori::modules::IO, __VA_ARGS__)
#define MORI_IO_WARN(...) MORI_WARN(::mori::modules::IO, __VA_ARGS__)
#define MORI_IO_ERROR(...) MORI_ERROR(::mori::modules::IO, __VA_ARGS__)
#define MORI_IO_CRITICAL(...) MORI_CRITICAL(::mori::modules::IO, __VA_ARGS__)
#define MORI_SHMEM_TRACE(...) MORI_TRACE(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_SHMEM_DEBUG(...) MORI_DEBUG(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_SHMEM_INFO(...) MORI_INFO(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_SHMEM_WARN(...) MORI_WARN(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_SHMEM_ERROR(...) MORI_ERROR(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_SHMEM_CRITICAL(...) MORI_CRITICAL(::mori::modules::SHMEM, __VA_ARGS__)
#define MORI_CORE_TRACE(...) MORI_TRACE(::mori::modules::CORE, __VA_ARGS__)
#define MORI_CORE_DEBUG(...) MORI_DEBUG(::mori::modules::CORE, __VA_ARGS__)
#define MORI_CORE_INFO(...) MORI_INFO(::mori::modules::CORE, __VA_ARGS__)
#define MORI_CORE_WARN(...) MORI_WARN(::mori::modules::CORE, __VA_ARGS__)
#define MORI_CORE_ERROR(...) MORI_ERROR(::mori::modules::CORE, __VA_ARGS__)
#define MORI_CORE_CRITICAL(...) MORI_CRITICAL(::mori::modules::CORE, __VA_ARGS__)
#define MORI_OPS_TRACE(...) MORI_TRACE(::mori::modules::OPS, __VA_ARGS__)
#define MORI_OPS_DEBUG(...) MORI_DEBUG(::mori::modules::OPS, __VA_ARGS__)
#define MORI_OPS_INFO(...) MORI_INFO(::mori::modules::OPS, __VA_ARGS__)
#define MORI_OPS_WARN(...) MORI_WARN(::mori::modules::OPS, __VA_ARGS__)
#define MORI_OPS_ERROR(...) MORI_ERROR(::mori::modules::OPS, __VA_ARGS__)
#define MORI_OPS_CRITICAL(...) MORI_CRITICAL(::mori::modules::OPS, __VA_ARGS__)
#define MORI_UMBP_TRACE(...) MORI_TRACE(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_UMBP_DEBUG(...) MORI_DEBUG(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_UMBP_INFO(...) MORI_INFO(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_UMBP_WARN(...) MORI_WARN(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_UMBP_ERROR(...) MORI_ERROR(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_UMBP_CRITICAL(...) MORI_CRITICAL(::mori::modules::UMBP, __VA_ARGS__)
#define MORI_METRICS_TRACE(...) MORI_TRACE(::mori::modules::METRICS, __VA_ARGS__)
#define MORI_METRICS_DEBUG(...) MORI_DEBUG(::mori::modules::METRICS, __VA_ARGS__)
#define MORI_METRICS_INFO(...) MORI_INFO(::mori::modules::METRICS, __VA_ARGS__)
#define MORI_METRICS_WARN(...) MORI_WARN(::mori::modules::METRICS, __VA_ARGS__)
#define MORI_METRICS_ERROR(...) MORI_ERROR(::mori::modules::METRICS, __VA_ARGS__)
#define MORI_METRICS_CRITICAL(...) MORI_CRITICAL(::mori::modules::METRICS, __VA_ARGS__)

#define MORI_TIMER(name, module)                                                          \
  ::mori::ScopedTimer timer_instance((name), []() -> ::mori::Logger& {                    \
    static const auto emud_mori_logger_ = ::mori::ModuleLogger::GetInstance().GetLogger(module); \
    return *emud_mori_logger_;                                                            \
  }())
#define MORI_FUNCTION_TIMER(module) MORI_TIMER(__PRETTY_FUNCTION__, module)

#endif  // EMUD_MORI_LOG_HPP
