#include "core/util/system_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace descentlab {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// This process's cgroup paths from /proc/self/cgroup: the v2 one ("0::/path") and the v1 memory one
// ("N:memory:/path"); empty when absent.
std::pair<std::string, std::string> cgroup_paths() {
  std::pair<std::string, std::string> paths;
  const auto text = read_text("/proc/self/cgroup");
  if (!text) return paths;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0) paths.first = line.substr(3);
    const auto memory = line.find(":memory:");
    if (memory != std::string::npos) paths.second = line.substr(memory + 8);
  }
  return paths;
}

// limit - usage of one cgroup folder's pair of files; empty when there is no limit.
std::optional<double> cgroup_headroom(const std::string& limit_file, const std::string& usage_file) {
  const auto limit_text = read_text(limit_file);
  if (!limit_text) return std::nullopt;
  const auto limit = parse_cgroup_bytes(*limit_text);
  if (!limit) return std::nullopt;
  double usage = 0.0;
  if (const auto usage_text = read_text(usage_file)) usage = parse_cgroup_bytes(*usage_text).value_or(0.0);
  return std::max(0.0, *limit - usage);
}

}  // namespace

std::optional<double> parse_meminfo_available(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    double kibibytes = -1.0;
    std::string unit;
    fields >> kibibytes >> unit;
    if (!fields.fail() && kibibytes >= 0.0 && std::isfinite(kibibytes) && unit == "kB") return kibibytes * 1024.0;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> parse_cgroup_bytes(const std::string& text) {
  std::istringstream fields(text);
  std::string word;
  fields >> word;
  if (word.empty() || word == "max" || word.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const double bytes = std::stod(word);
  // cgroup v1 writes "no limit" as a number near 2^63.
  if (bytes >= 9.0e18) return std::nullopt;
  return bytes;
}

std::optional<MemoryAvailability> available_memory() {
  std::optional<MemoryAvailability> best;
  if (const auto meminfo = read_text("/proc/meminfo")) {
    if (const auto bytes = parse_meminfo_available(*meminfo))
      best = MemoryAvailability{*bytes, "MemAvailable in /proc/meminfo"};
  }
  // The process's own cgroup, and the root of each mount (what a container sees as its own cgroup).
  const auto [v2, v1] = cgroup_paths();
  std::vector<std::pair<std::string, std::string>> limits;
  for (const std::string& folder :
       {"/sys/fs/cgroup" + v2, "/sys/fs/cgroup/unified" + v2, std::string("/sys/fs/cgroup")}) {
    limits.emplace_back(folder + "/memory.max", folder + "/memory.current");
  }
  for (const std::string& folder : {"/sys/fs/cgroup/memory" + v1, std::string("/sys/fs/cgroup/memory")}) {
    limits.emplace_back(folder + "/memory.limit_in_bytes", folder + "/memory.usage_in_bytes");
  }
  for (const auto& [limit_file, usage_file] : limits) {
    const auto headroom = cgroup_headroom(limit_file, usage_file);
    if (headroom && (!best || *headroom < best->bytes)) {
      best = MemoryAvailability{*headroom, "the cgroup limit " + limit_file + " less its usage"};
    }
  }
  return best;
}

std::string byte_text(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 5) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  } else {
    std::snprintf(text, sizeof text, bytes < 10.0 ? "%.1f %s" : "%.0f %s", bytes, units[unit]);
  }
  return text;
}

ResidentMemory resident_memory() {
  std::ifstream status("/proc/self/status");
  std::string line;
  ResidentMemory memory;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) memory.resident = std::stoll(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) memory.peak = std::stoll(line.substr(6)) * 1024;
  }
  return memory;
}

}  // namespace descentlab
