#include "core/util/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/util/error.h"

namespace descentlab {
namespace {

std::string to_hex(const unsigned char* digest, unsigned int length) {
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xF]);
  }
  return hex;
}

}  // namespace

struct Sha256::Context {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> digest{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (!context_->digest || EVP_DigestInit_ex(context_->digest.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("OpenSSL could not start a SHA-256 digest");
  }
}

Sha256::~Sha256() = default;

void Sha256::add(const void* data, size_t size) {
  if (size > 0) EVP_DigestUpdate(context_->digest.get(), data, size);
}

void Sha256::add(const std::string& text) {
  add(text.c_str(), text.size() + 1);
}

void Sha256::add_int(int64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF);
  add(bytes, sizeof bytes);
}

std::string Sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_length = 0;
  EVP_DigestFinal_ex(context_->digest.get(), digest.data(), &digest_length);
  return to_hex(digest.data(), digest_length);
}

std::string sha256_of_bytes(const std::string& bytes) {
  Sha256 sum;
  sum.add(bytes.data(), bytes.size());
  return sum.hex();
}

std::string sha256_of_file(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw DataError(path, std::string("cannot open: ") + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw DataError(path, "OpenSSL could not start a SHA-256 digest");
  }
  std::array<unsigned char, 1 << 16> buffer{};
  size_t got = 0;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    EVP_DigestUpdate(context.get(), buffer.data(), got);
  }
  if (std::ferror(file.get())) throw DataError(path, "read error while hashing");
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_length = 0;
  EVP_DigestFinal_ex(context.get(), digest.data(), &digest_length);
  return to_hex(digest.data(), digest_length);
}

}  // namespace descentlab
