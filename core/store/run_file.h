#pragma once
// The run file: one HDF5 file per run holding its configuration, metric series, weight histograms, robustness
// sweeps and checkpoints. Layout in docs/run-file.md; readable with h5py without DescentLab.
// This header needs neither LibTorch nor Qt: tensors travel as record::TensorBlob (core/record/checkpoint.h).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/record/annotation.h"
#include "core/record/checkpoint.h"
#include "core/record/metrics.h"
#include "core/util/error.h"

namespace descentlab::store {

inline constexpr const char* kFormatName = "descentlab-run";
// 2: each metric series' kind attribute is its shape ("scalar" | "per_layer" | "per_threshold" | "vector"); version 1
// wrote "scalar" for every series of width 1, so a one-layer per-layer series could not be told from a scalar.
// 3: adds the kind "per_sparsity" (the live sparsity frontier's series), which a version-2 reader would refuse.
// 4: commits that only add rows go to the run log RUN.h5.log beside the file (root attribute log_sequence: the last
// record folded in); a version-3 reader would miss the log's rows without a word.
// 5: a checkpoint's tensors may be stored in a data file beside the run file (RUN.h5.checkpoints/<sequence>.bin, as
// HDF5 external storage; core/store/checkpoint_files.h), which a version-4 reader would look for in its own folder.
inline constexpr int64_t kFormatVersion = 5;

// Every problem with a run file: the message names the file and the HDF5 object.
class RunFileError : public DataError {
 public:
  enum class Kind {
    NotFound,         // no such file
    NotHdf5,          // exists but is not HDF5 (or is truncated past recognition)
    Corrupt,          // HDF5 signature but unreadable structure (truncated, damaged)
    ForeignFile,      // HDF5 written by another program (no format = "descentlab-run")
    NewerVersion,     // format_version newer than this build reads
    MissingObject,    // an expected group, dataset or attribute is absent
    ShapeMismatch,    // a stored tensor or series does not fit what it is loaded into
    InvalidArgument,  // a bad name or inconsistent data given to the writer
    WriteFailed,      // the disk refused (full, read-only, permissions)
    Busy,             // another writer holds the run file's lock
  };
  RunFileError(Kind kind, const std::string& path, const std::string& object, const std::string& message)
      : DataError(path, (object.empty() ? "" : object + ": ") + message), kind_(kind), object_(object) {}
  Kind kind() const { return kind_; }
  const std::string& object() const { return object_; }

 private:
  Kind kind_;
  std::string object_;
};

// A file a run was made from, as it was when the run began (issue 53): a user's TorchScript module or data file.
// The run file keeps it under /inputs/model and /inputs/data (docs/run-file.md), so that a resume, a sweep or a
// prune knows whether the file it is given is the one the run trained on.
struct RunInputFile {
  std::string path;  // absolute, as the run was given it
  uint64_t bytes = 0;
  std::string sha256;  // 64 lowercase hex digits
};

// A person's name, tags and note (core/record/annotation.h): root attributes "name", "tags" (joined by ", ") and
// "note" of the run file, absent while empty; changed through the run log, so a rename costs an append, not a rewrite
// of the run (core/store/annotate_run.h).
using record::kMaxNoteBytes;
using record::kMaxRunNameChars;
using record::kMaxTagChars;
using record::kMaxTags;
using record::RunAnnotation;
// The annotation as stored: the name trimmed, tags trimmed with empty ones and repeats dropped. Throws
// RunFileError(InvalidArgument) naming the value for a name, tag or note past its limit, a line break in the name,
// or a comma or line break in a tag. `path` names the run in the message.
RunAnnotation checked_annotation(const RunAnnotation& annotation, const std::string& path);
// "baseline, ablation" <-> {"baseline", "ablation"}; tags_from_text splits on commas and trims (no other check).
std::string tags_text(const std::vector<std::string>& tags);
std::vector<std::string> tags_from_text(const std::string& text);

// Where a branched run came from (issue 55): its parent's file (absolute, as given) and identity, the SHA-256 of the
// parent's checkpoint it continued from, that checkpoint's step, and the settings it changed ("constraints.alpha 0.4
// -> 0.1; train.epochs 2 -> 4"). Root attributes parent_file, parent_run_id, parent_checkpoint_sha256, branch_step and
// branch_changes (docs/run-file.md). The child does not copy its parent's rows.
struct RunLineage {
  std::string parent_file;
  std::string parent_run_id;
  std::string parent_checkpoint_sha256;
  int64_t branch_step = 0;
  std::string changes;
};

struct RunHeader {
  int64_t format_version = kFormatVersion;
  std::string app_version;
  std::string torch_version;
  std::string device;
  std::string created;      // ISO 8601, UTC
  std::string config_json;  // the full experiment configuration
  // The run's identity (root attribute run_id): 32 lowercase hex digits drawn at random when the run is created, kept
  // by every later version of the file (resumes, folds, pack) and carried in the header of its log
  // (core/store/run_log.h) and the names of its checkpoint data files (core/store/checkpoint_files.h), so that a log
  // or data file of another run is never taken for this one's. "" in a file from before identities; its next writer
  // gives it one.
  std::string run_id;
  // A run of a user's module on a user's data file (the torchscript task): both files as they were at its start.
  std::optional<RunInputFile> model_file, data_file;
  // The person's name, tags and note (with those its log holds after the file's own, for a reader).
  RunAnnotation annotation;
  // A branched run's parent (none for a run started from scratch).
  std::optional<RunLineage> lineage;
  // For a new run only: the module file's bytes, which the writer's first commit keeps beside the run file as a copy
  // (RUN.h5.checkpoints/module-<run id>.bin, named by /inputs/model/module), so that the run resumes, sweeps and
  // prunes after the original moved or changed. RunReader::module_copy() reads it back. Not read into a header.
  std::shared_ptr<const std::string> module_copy;
};

// A new run identity: 128 random bits as 32 lowercase hex digits.
std::string new_run_id();
// Whether `text` is a run identity (32 lowercase hex digits).
bool is_run_id(const std::string& text);

struct MetricSeries {
  std::string name;
  record::SeriesShape shape = record::SeriesShape::Scalar;  // scalars are drawn against step, the rest per row
  int64_t width = 1;                                        // 1 for scalars, layers for vectors
  std::vector<int64_t> steps;                               // rows
  std::vector<double> wall_times;                           // rows, seconds since the Unix epoch
  std::vector<double> values;                               // rows x width, row-major
  size_t rows() const { return steps.size(); }
};

struct HistogramSeries {
  std::string name;
  std::vector<double> bin_edges;  // bins + 1
  std::vector<int64_t> steps;     // snapshots
  std::vector<int64_t> counts;    // snapshots x bins
  size_t bins() const { return bin_edges.empty() ? 0 : bin_edges.size() - 1; }
};

struct CheckpointInfo {
  std::string label;
  int64_t step = 0;
  int64_t epoch = 0;
  std::string created;
  std::string sha256;  // of the whole checkpoint ("" in a file from before checksums)
};

// UTC now as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_timestamp();

}  // namespace descentlab::store
