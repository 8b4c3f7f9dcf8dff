#pragma once
#include <string>

namespace descentlab {

// Lower-case hex SHA-256 of a file's bytes (OpenSSL). Throws DataError when the file cannot be read.
std::string sha256_of_file(const std::string& path);

}  // namespace descentlab
