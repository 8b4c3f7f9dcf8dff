#include "core/session/failure.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <ios>
#include <new>
#include <sstream>

#include "core/dist/launch.h"
#include "core/store/run_file.h"
#include "core/train/trainer.h"
#include "core/util/error.h"
#include "core/util/system_memory.h"

namespace descentlab::session {
namespace {

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// "192 MiB (201326592 bytes)" for a count of bytes that fits in 64 bits; "" for anything else.
std::string exact_bytes(const std::string& digits) {
  if (digits.empty() || digits.find('.') != std::string::npos) return "";
  errno = 0;
  const unsigned long long bytes = std::strtoull(digits.c_str(), nullptr, 10);
  if (errno == ERANGE) return "";
  return byte_text(static_cast<double>(bytes)) + " (" + digits + " bytes)";
}

// An allocation that failed outside a training run (a sweep, a probe): what it asked for and what to make smaller
// (a training run's own message adds its estimate: TrainingSession::run).
std::string out_of_memory(const std::exception& failure) {
  const std::string failed = failed_allocation(failure);
  return "out of memory: " + failed +
         "; make the model (model.width, model.layers, model.ff_width), the batch (train.batch_size) or the data "
         "smaller, or " +
         (failed.find("GPU") != std::string::npos
              ? "use a GPU with more free memory"
              : "give the process more memory (ulimit -v, its cgroup's memory.max)");
}

}  // namespace

bool says_out_of_memory(const std::string& message) {
  const std::string text = lower_case(message);
  for (const char* words : {"out of memory", "not enough memory", "can't allocate memory", "cannot allocate memory"}) {
    if (text.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string requested_allocation(const std::string& message) {
  const std::string marker = "to allocate ";  // "you tried to allocate 8 bytes.", "Tried to allocate 2.00 GiB"
  const size_t at = lower_case(message).find(marker);
  if (at == std::string::npos) return "";
  std::istringstream words(message.substr(at + marker.size()));
  std::string number, unit;
  words >> number >> unit;
  while (!unit.empty() && !std::isalpha(static_cast<unsigned char>(unit.back()))) unit.pop_back();  // "bytes."
  const bool numeric = !number.empty() && std::isdigit(static_cast<unsigned char>(number[0])) &&
                       number.find_first_not_of("0123456789.") == std::string::npos;
  if (!numeric) return "";
  if (lower_case(unit) == "bytes") return exact_bytes(number);
  for (const char* known : {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB"}) {
    if (unit == known) return number + " " + unit;
  }
  return "";
}

std::string failed_allocation(const std::exception& error) {
  std::string message;
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) {
    message = torch_error->what_without_backtrace();
    if (!says_out_of_memory(message)) return "";
  } else if (!dynamic_cast<const std::bad_alloc*>(&error)) {
    return "";
  }
  const std::string size = requested_allocation(message);
  const std::string memory = lower_case(message).find("cuda") != std::string::npos ? "GPU memory" : "host memory";
  return "an allocation of " + (size.empty() ? "" : size + " of ") + memory + " failed";
}

Failure describe_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const store::RunFileError& failure) {
    const auto kind = failure.kind();
    const bool io = kind == store::RunFileError::Kind::WriteFailed || kind == store::RunFileError::Kind::Busy;
    return {io ? FailureKind::Io : FailureKind::BadInput, failure.what()};
  } catch (const MemoryError& failure) {
    return {FailureKind::NoMemory, failure.what()};
  } catch (const IoError& failure) {
    return {FailureKind::Io, failure.what()};
  } catch (const train::TrainingError& failure) {
    return {FailureKind::RunFailed, failure.what()};
  } catch (const dist::DistributedError& failure) {  // another rank stopped, a timeout, ranks that disagree
    return {FailureKind::RunFailed, failure.what()};
  } catch (const Error& failure) {  // configs, datasets, run files, arguments: each names what is at fault
    return {FailureKind::BadInput, failure.what()};
  } catch (const std::bad_alloc& failure) {
    return {FailureKind::NoMemory, out_of_memory(failure)};
  } catch (const c10::Error& failure) {
    if (!failed_allocation(failure).empty()) return {FailureKind::NoMemory, out_of_memory(failure)};
    return {FailureKind::Internal, "internal error (LibTorch): " + std::string(failure.what_without_backtrace())};
  } catch (const std::filesystem::filesystem_error& failure) {
    return {FailureKind::Io, failure.what()};
  } catch (const std::ios_base::failure& failure) {
    return {FailureKind::Io, failure.what()};
  } catch (const std::exception& failure) {
    return {FailureKind::Internal, std::string("internal error: ") + failure.what()};
  } catch (...) {
    return {FailureKind::Internal, "internal error: an exception that is not a std::exception"};
  }
}

std::string error_text(const std::exception& error) {
  // LibTorch's errors carry a C++ stack trace of 16-24 frames after the message: the message is what a user needs.
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) return torch_error->what_without_backtrace();
  return error.what();
}

}  // namespace descentlab::session
