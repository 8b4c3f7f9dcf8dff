#include "core/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "core/util/error.h"

namespace descentlab::data {
namespace {

constexpr int kMaxRank = 8;

bool is_known_type(uint8_t code) {
  switch (code) {
    case 0x08:
    case 0x09:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x0E: return true;
    default: return false;
  }
}

// zlib's gzread reads gzip streams and passes plain files through unchanged, so one reader serves both.
class IdxStream {
 public:
  explicit IdxStream(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb"), &gzclose) {
    if (!file_) {
      throw DataError(path, std::string("cannot open IDX file: ") + (errno ? std::strerror(errno) : "gzopen failed"));
    }
    gzbuffer(file_.get(), 1 << 17);
  }

  bool gzip() { return gzdirect(file_.get()) == 0; }

  // Reads up to `size` bytes; returns how many were read. Throws on a corrupt or truncated gzip stream.
  size_t read_some(void* destination, size_t size) {
    size_t total = 0;
    auto* out = static_cast<unsigned char*>(destination);
    while (total < size) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(size - total, 1u << 30));
      const int got = gzread(file_.get(), out + total, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_.get(), &code);
        throw DataError(path_, std::string("corrupt or truncated gzip data: ") + message);
      }
      if (got == 0) {
        int code = 0;
        const char* message = gzerror(file_.get(), &code);
        if (code != Z_OK && code != Z_STREAM_END) {
          throw DataError(path_, std::string("corrupt or truncated gzip data: ") + message);
        }
        break;
      }
      total += static_cast<size_t>(got);
    }
    return total;
  }

  void read_exact(void* destination, size_t size, const char* what) {
    const size_t got = read_some(destination, size);
    if (got != size) {
      throw DataError(path_, std::string("truncated IDX file: ended inside the ") + what + " (read " +
                                 std::to_string(got) + " of " + std::to_string(size) + " bytes)");
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file_;
};

uint32_t big_endian_u32(const unsigned char* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | uint32_t{bytes[3]};
}

IdxHeader parse_header(IdxStream& stream) {
  unsigned char magic[4];
  const size_t got = stream.read_some(magic, 4);
  if (got < 4) throw DataError(stream.path(), "not an IDX file: shorter than the 4-byte magic number");
  IdxHeader header;
  header.gzip = stream.gzip();
  if (magic[0] != 0 || magic[1] != 0 || !is_known_type(magic[2]) || magic[3] == 0 || magic[3] > kMaxRank) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%02x%02x%02x%02x", magic[0], magic[1], magic[2], magic[3]);
    throw DataError(stream.path(), std::string("not an IDX file: wrong magic number 0x") + hex +
                                       " (expected 0x0000TTRR with element type TT in 08,09,0b,0c,0d,0e "
                                       "and rank RR in 1.." +
                                       std::to_string(kMaxRank) + ")");
  }
  header.type = static_cast<IdxType>(magic[2]);
  const int rank = magic[3];
  std::vector<unsigned char> dims(4 * static_cast<size_t>(rank));
  stream.read_exact(dims.data(), dims.size(), "dimension list");
  for (int i = 0; i < rank; ++i) header.dims.push_back(big_endian_u32(&dims[4 * static_cast<size_t>(i)]));
  return header;
}

void to_host_order(std::vector<uint8_t>& bytes, size_t element_size) {
  if (element_size == 1) return;
  for (size_t offset = 0; offset + element_size <= bytes.size(); offset += element_size) {
    std::reverse(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                 bytes.begin() + static_cast<std::ptrdiff_t>(offset + element_size));
  }
}

}  // namespace

const char* idx_type_name(IdxType type) {
  switch (type) {
    case IdxType::UInt8: return "uint8";
    case IdxType::Int8: return "int8";
    case IdxType::Int16: return "int16";
    case IdxType::Int32: return "int32";
    case IdxType::Float32: return "float32";
    case IdxType::Float64: return "float64";
  }
  return "unknown";
}

size_t idx_type_size(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
    case IdxType::Int8: return 1;
    case IdxType::Int16: return 2;
    case IdxType::Int32:
    case IdxType::Float32: return 4;
    case IdxType::Float64: return 8;
  }
  return 1;
}

int64_t IdxHeader::element_count() const {
  // Saturates instead of overflowing (four dimensions of 2^32 - 1 would): the callers refuse it as implausible.
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) return std::numeric_limits<int64_t>::max();
  }
  return count;
}

IdxHeader read_idx_header(const std::string& path) {
  IdxStream stream(path);
  return parse_header(stream);
}

IdxArray read_idx(const std::string& path) {
  IdxStream stream(path);
  IdxArray array;
  array.header = parse_header(stream);
  const size_t element_size = idx_type_size(array.header.type);
  // 2^31 elements is far beyond any dataset here; a larger product means a corrupt header, not a large file.
  const int64_t count = array.header.element_count();
  if (count < 0 || count > (int64_t{1} << 31)) {
    throw DataError(path, "implausible IDX dimensions (" + std::to_string(count) + " elements): corrupt header");
  }
  const size_t expected = static_cast<size_t>(count) * element_size;
  // Grow while reading so that a header that lies about the size cannot make us allocate it up front.
  constexpr size_t kChunk = size_t{1} << 22;
  array.bytes.reserve(std::min(expected, kChunk));
  while (array.bytes.size() < expected) {
    const size_t before = array.bytes.size();
    const size_t want = std::min(kChunk, expected - before);
    array.bytes.resize(before + want);
    const size_t got = stream.read_some(array.bytes.data() + before, want);
    if (got < want) {
      throw DataError(path, "truncated IDX file: the header declares " + std::to_string(expected) +
                                " data bytes but only " + std::to_string(before + got) + " follow");
    }
  }
  unsigned char extra = 0;
  if (stream.read_some(&extra, 1) != 0) {
    throw DataError(path, "IDX file is longer than its header declares (extra bytes after " + std::to_string(expected) +
                              " data bytes)");
  }
  to_host_order(array.bytes, element_size);
  return array;
}

ImageSet read_image_set(const std::string& images_path, const std::string& labels_path) {
  IdxArray images = read_idx(images_path);
  if (images.header.type != IdxType::UInt8 || images.header.dims.size() != 3) {
    throw DataError(images_path, std::string("expected uint8 images of rank 3 (count, rows, cols), found ") +
                                     idx_type_name(images.header.type) + " of rank " +
                                     std::to_string(images.header.dims.size()));
  }
  IdxArray labels = read_idx(labels_path);
  if (labels.header.type != IdxType::UInt8 || labels.header.dims.size() != 1) {
    throw DataError(labels_path, std::string("expected uint8 labels of rank 1, found ") +
                                     idx_type_name(labels.header.type) + " of rank " +
                                     std::to_string(labels.header.dims.size()));
  }
  if (labels.header.dims[0] != images.header.dims[0]) {
    throw DataError(labels_path, std::to_string(labels.header.dims[0]) + " labels for " +
                                     std::to_string(images.header.dims[0]) + " images in " + images_path);
  }
  ImageSet set;
  set.count = images.header.dims[0];
  set.rows = images.header.dims[1];
  set.cols = images.header.dims[2];
  set.pixels = std::move(images.bytes);
  set.labels = std::move(labels.bytes);
  return set;
}

}  // namespace descentlab::data
