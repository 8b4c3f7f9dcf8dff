#pragma once
// Typed errors of the engine. Every message names the file, key or value at fault, so the CLI and the GUI can
// show it as it is.

#include <stdexcept>
#include <string>

namespace descentlab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that exists but cannot be used: wrong format, truncated, corrupt, inconsistent.
class DataError : public Error {
 public:
  DataError(const std::string& path, const std::string& message) : Error(path + ": " + message), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A dataset (or one of its files) that is not in the cache. The message says how to fetch it.
class MissingDataError : public DataError {
 public:
  MissingDataError(const std::string& path, const std::string& message) : DataError(path, message) {}
};

}  // namespace descentlab
