#pragma once
// How much memory this process may still allocate: /proc/meminfo's MemAvailable, lowered to what the process's
// cgroup leaves (memory.max - memory.current, cgroup v2; memory.limit_in_bytes - memory.usage_in_bytes, v1).
// Used to refuse a run that cannot fit before it allocates (core/config/footprint.h).

#include <cstdint>
#include <optional>
#include <string>

namespace descentlab {

struct MemoryAvailability {
  double bytes = 0.0;  // what may still be allocated
  std::string source;  // where the figure came from, e.g. "MemAvailable in /proc/meminfo"
};

// MemAvailable (bytes) from the text of /proc/meminfo; empty when the line is absent or malformed.
std::optional<double> parse_meminfo_available(const std::string& meminfo);
// A cgroup limit file's value in bytes ("max" or unreadable: empty).
std::optional<double> parse_cgroup_bytes(const std::string& text);

// This machine's figure; empty when none of the sources can be read (then nothing is refused).
std::optional<MemoryAvailability> available_memory();

// "1.5 GiB", "730 MiB", "12 KiB", "512 bytes".
std::string byte_text(double bytes);

// This process's resident memory now and its peak so far, in bytes (/proc/self/status VmRSS and VmHWM; 0 where
// the kernel does not say).
struct ResidentMemory {
  long long resident = 0;
  long long peak = 0;
};
ResidentMemory resident_memory();

}  // namespace descentlab
