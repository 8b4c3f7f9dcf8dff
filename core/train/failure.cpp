#include "core/session/failure.h"

#include <c10/util/Exception.h>

#include <filesystem>
#include <ios>
#include <new>

#include "core/dist/launch.h"
#include "core/store/run_file.h"
#include "core/train/trainer.h"
#include "core/util/error.h"

namespace descentlab::session {
namespace {

bool mentions_memory(const std::string& message) {
  for (const char* words : {"not enough memory", "out of memory", "can't allocate memory", "CUDA out of memory"}) {
    if (message.find(words) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

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
  } catch (const std::bad_alloc&) {
    return {FailureKind::NoMemory,
            "out of memory (an allocation failed); make the model, the batch or the data smaller"};
  } catch (const c10::Error& failure) {
    const std::string message = failure.what_without_backtrace();
    if (mentions_memory(message)) return {FailureKind::NoMemory, "out of memory: " + message};
    return {FailureKind::Internal, "internal error (LibTorch): " + message};
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
