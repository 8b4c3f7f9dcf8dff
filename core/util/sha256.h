#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace descentlab {

// Lower-case hex SHA-256 of a file's bytes (OpenSSL). Throws DataError when the file cannot be read.
std::string sha256_of_file(const std::string& path);
// Lower-case hex SHA-256 of bytes in memory.
std::string sha256_of_bytes(const std::string& bytes);

// An incremental SHA-256 over bytes in memory (OpenSSL), for checksums of data that is not a file.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void add(const void* data, size_t size);
  void add(const std::string& text);  // the text and a terminating zero byte, so "ab"+"c" differs from "a"+"bc"
  void add_int(int64_t value);        // 8 bytes, little-endian
  std::string hex();                  // finishes the digest; the object is spent afterwards

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace descentlab
