#include "core/store/checkpoint_bytes.h"

#include <cstring>

#include "core/util/error.h"

namespace descentlab::store {
namespace {

void put_number(std::vector<uint8_t>& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void put_text(std::vector<uint8_t>& out, const std::string& text) {
  put_number(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  uint64_t number(const char* what) {
    need(8, what);
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes_[at_ + i]) << (8 * i);
    at_ += 8;
    return value;
  }

  std::string text(const char* what) {
    const uint64_t size = number(what);
    need(size, what);
    std::string value(reinterpret_cast<const char*>(bytes_.data() + at_), size);
    at_ += size;
    return value;
  }

  std::vector<uint8_t> raw(const char* what) {
    const uint64_t size = number(what);
    need(size, what);
    std::vector<uint8_t> value(bytes_.begin() + static_cast<std::ptrdiff_t>(at_),
                               bytes_.begin() + static_cast<std::ptrdiff_t>(at_ + size));
    at_ += size;
    return value;
  }

  bool done() const { return at_ == bytes_.size(); }

 private:
  void need(uint64_t size, const char* what) const {
    if (size > bytes_.size() - at_) {
      throw Error(source_ + ": the checkpoint's " + what + " needs " + std::to_string(size) + " bytes, but only " +
                  std::to_string(bytes_.size() - at_) + " are left");
    }
  }

  const std::vector<uint8_t>& bytes_;
  std::string source_;
  size_t at_ = 0;
};

constexpr uint64_t kMagic = 0x3174706b63736c64ULL;  // "dlsckpt1"

}  // namespace

std::vector<uint8_t> checkpoint_to_bytes(const record::CheckpointData& checkpoint) {
  std::vector<uint8_t> out;
  put_number(out, kMagic);
  put_number(out, static_cast<uint64_t>(checkpoint.step));
  put_number(out, static_cast<uint64_t>(checkpoint.epoch));
  put_text(out, checkpoint.created);
  put_text(out, checkpoint.extra_json);
  put_number(out, checkpoint.sections.size());
  for (const auto& [section, tensors] : checkpoint.sections) {
    put_text(out, section);
    put_number(out, tensors.size());
    for (const auto& [name, blob] : tensors) {
      put_text(out, name);
      put_text(out, blob.dtype);
      put_number(out, blob.shape.size());
      for (int64_t dim : blob.shape) put_number(out, static_cast<uint64_t>(dim));
      put_number(out, blob.bytes.size());
      out.insert(out.end(), blob.bytes.begin(), blob.bytes.end());
    }
  }
  return out;
}

record::CheckpointData checkpoint_from_bytes(const std::vector<uint8_t>& bytes, const std::string& source) {
  Reader in(bytes, source);
  if (in.number("header") != kMagic) throw Error(source + ": not a checkpoint (its first 8 bytes differ)");
  record::CheckpointData checkpoint;
  checkpoint.step = static_cast<int64_t>(in.number("step"));
  checkpoint.epoch = static_cast<int64_t>(in.number("epoch"));
  checkpoint.created = in.text("creation time");
  checkpoint.extra_json = in.text("extra fields");
  const uint64_t sections = in.number("section count");
  for (uint64_t s = 0; s < sections; ++s) {
    const std::string section = in.text("section name");
    auto& tensors = checkpoint.sections[section];
    const uint64_t count = in.number("tensor count");
    for (uint64_t t = 0; t < count; ++t) {
      const std::string name = in.text("tensor name");
      record::TensorBlob blob;
      blob.dtype = in.text("dtype");
      const uint64_t dims = in.number("rank");
      if (dims > 64)
        throw Error(source + ": tensor " + section + "/" + name + " claims " + std::to_string(dims) + " dimensions");
      for (uint64_t d = 0; d < dims; ++d) blob.shape.push_back(static_cast<int64_t>(in.number("shape")));
      blob.bytes = in.raw("tensor bytes");
      tensors.emplace(name, std::move(blob));
    }
  }
  if (!in.done()) throw Error(source + ": bytes left over after the checkpoint's last tensor");
  return checkpoint;
}

}  // namespace descentlab::store
