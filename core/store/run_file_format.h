#pragma once
// The on-disk layout of a run file (internal to core/store): how each part is written to and read from HDF5, shared
// by the reader, the writer and the file versions they build (core/store/file_version.h).
// docs/run-file.md is the public description; keep the two in step.

#include <H5Cpp.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/record/events.h"
#include "core/record/metrics.h"
#include "core/store/checkpoint_files.h"
#include "core/store/run_file.h"

namespace descentlab::store::format {

inline constexpr const char* kMetrics = "metrics";
inline constexpr const char* kHistograms = "histograms";
inline constexpr const char* kSweeps = "sweeps";
inline constexpr const char* kCheckpoints = "checkpoints";
// Root attribute: the sequence of the last run-log record this file holds (absent before format 4: none).
inline constexpr const char* kLogSequence = "log_sequence";
// The files a run of a user's module was made from (RunHeader::model_file, data_file): groups /inputs/model and
// /inputs/data with the attributes path, bytes and sha256; /inputs/model/module is the module's copy, a uint8
// dataset stored in its data file beside the run file (or in the file itself, once packed).
inline constexpr const char* kInputs = "inputs";
inline constexpr const char* kModuleCopy = "module";
// Root attribute: the run's identity (RunHeader::run_id; absent in files from before identities).
inline constexpr const char* kRunId = "run_id";
// Root attributes of a person's annotation (RunHeader::annotation), each absent while empty: "name", "tags" (joined
// by ", ") and "note".
inline constexpr const char* kAnnotationName = "name";
inline constexpr const char* kAnnotationTags = "tags";
inline constexpr const char* kAnnotationNote = "note";
// Root attributes of a branched run's lineage (RunHeader::lineage); all present or none.
inline constexpr const char* kParentFile = "parent_file";
inline constexpr const char* kParentRunId = "parent_run_id";
inline constexpr const char* kParentCheckpointSha256 = "parent_checkpoint_sha256";
inline constexpr const char* kBranchStep = "branch_step";
inline constexpr const char* kBranchChanges = "branch_changes";

// Opens `path` read-only or read-write after checking, in order: it exists, it is HDF5, HDF5 can open it, it is a
// DescentLab run file, its format_version is not newer than this build's and an older one does not contradict its
// layout (check_layout). Throws RunFileError naming the problem.
H5::H5File open_validated(const std::string& path, unsigned flags);

RunHeader read_header(const H5::H5File& file, const std::string& path);
void write_header(H5::H5File& file, const RunHeader& header);
// Sets the root's annotation attributes to `annotation` (removing those left empty).
void write_annotation(H5::H5File& file, const RunAnnotation& annotation);
// The root's lineage attributes (all five, when `lineage` is set).
void write_lineage(H5::H5File& file, const std::optional<RunLineage>& lineage);
// A person's annotation and a branched run's lineage from the root's attributes into `header`; RunFileError names
// a bad or missing one.
void read_annotation_and_lineage(const H5::Group& root, const std::string& path, RunHeader& header);

// Writes the header and the four top-level groups into a new, empty file.
void initialize_run_file(H5::H5File& file, const RunHeader& header);
// Writes /inputs for the header's model_file and data_file (nothing when it has neither), the module's copy an
// external dataset in the data file stored as `module_copy_name` ("": none).
void write_inputs(H5::H5File& file, const RunHeader& header, const std::string& module_copy_name);
// Reads /inputs into header.model_file and header.data_file (left empty when the file has none); throws
// RunFileError(Corrupt) naming the object when an attribute is missing or not a SHA-256.
void read_inputs(const H5::H5File& file, const std::string& path, RunHeader& header);
// The module copy's bytes, from its data file (`files`) or the file itself, checked against /inputs/model's size and
// sha256: RunFileError MissingObject when the run has none, Corrupt naming the object when they differ.
std::string read_module_copy(const H5::H5File& file, const std::string& path, CheckpointFiles& files);
// Brings an external module copy into the file itself (pack_run), checked as read_module_copy does.
void embed_module_copy(H5::H5File& file, const std::string& path, CheckpointFiles& files);

// The HDF5 memory type and element size for a torch dtype name; throws RunFileError (InvalidArgument) otherwise.
const H5::PredType& hdf5_type_of(const std::string& dtype, const std::string& path, const std::string& object);
size_t element_size_of(const std::string& dtype, const std::string& path, const std::string& object);

// Names of metrics, histograms, sweeps, checkpoint labels, sections and tensors become HDF5 link names.
void validate_name(const std::string& what, const std::string& name, const std::string& path);

// A scalar series' last row as attributes of its group (issue 35): a runs table reads them without inflating a
// chunk of up to 8192 rows per column. `last_rows` is the row count they describe; a reader uses them only when it
// equals the series' length (a writer of an older build that appended rows without them leaves them stale).
inline constexpr const char* kLastRows = "last_rows";
inline constexpr const char* kLastStep = "last_step";
inline constexpr const char* kLastValue = "last_value";
void set_last_row(H5::Group& series, int64_t rows, int64_t step, double value);
void remove_last_row(H5::Group& series);
void write_metric_rows(H5::Group& metrics, const std::string& name, record::SeriesShape shape, int64_t width,
                       const std::vector<int64_t>& steps, const std::vector<double>& wall_times,
                       const std::vector<double>& values);
void write_histogram_rows(H5::Group& histograms, const std::string& name, const std::vector<double>& edges,
                          const std::vector<int64_t>& steps, const std::vector<int64_t>& counts);
void write_sweep(H5::Group& sweeps, const record::SweepResult& sweep);
// Writes a checkpoint with its checksums (core/store/checkpoint_checksums.h): attribute "sha256" on each section
// group and on the checkpoint group. With `external`, the tensors are datasets with external storage in the data file
// it names (already written, core/store/checkpoint_files.h); without, their bytes go into the run file.
void write_checkpoint(H5::Group& checkpoints, const std::string& label, const record::CheckpointData& checkpoint,
                      const std::string& path, const ExternalPlacement* external = nullptr);
// Reads a checkpoint and checks its checksums; a mismatch is RunFileError(Corrupt) naming the damaged section.
// A checkpoint without checksums is read unchecked only in a file whose format_version predates them (1 and 2);
// in a newer one a missing checksum is Corrupt, naming the part (deleted attributes let damaged bytes through).
// Tensors with external storage are read from `files` (those of the run file `path`; nullptr: opened now).
record::CheckpointData read_checkpoint(const H5::Group& group, const std::string& path, const std::string& object,
                                       int64_t format_version, CheckpointFiles* files = nullptr);
// The external storage of `dataset`: its data file's stored name, offset and size; false when it has none. Throws
// std::runtime_error for a storage list of more than one part (DescentLab writes one).
bool external_storage(const H5::DataSet& dataset, std::string& name, uint64_t& offset, uint64_t& size);
// The stored names of the data files the checkpoints under `checkpoints` (or one checkpoint's group) use.
std::set<std::string> external_file_names(const H5::Group& group);
// The data file of each checkpoint below `checkpoints`, from its first dataset alone: a checkpoint's tensors are
// written by one commit into one data file. For readers, which open the files early (a checkpoint's file is also
// opened when it is read); the writer's collection of unreferenced files walks every dataset (external_file_names).
std::set<std::string> checkpoint_data_file_names(const H5::Group& checkpoints);
// The first format_version whose checkpoints all carry checksums.
inline constexpr int64_t kChecksummedFormat = 3;
// A checkpoint group's attribute saying it was written before checksums, in a file upgraded since: it is read
// without a check, as it always was. An upgrade never computes sums over bytes it could not check.
inline constexpr const char* kUnsummed = "unsummed";
// Marks every checkpoint under `checkpoints` that has no checksum (a file of `format_version` being upgraded).
void mark_unsummed(H5::Group& checkpoints, int64_t format_version);
// Refuses (RunFileError Corrupt, naming /@format_version) an older format_version that contradicts the file's
// layout: a log_sequence (format 4), data files (5) or checksums (3) in a file that claims to predate them, since
// an older version is read with fewer checks. Nothing to check for this build's version.
void check_layout(const H5::H5File& file, const std::string& path, int64_t format_version);
// The file's run_id ("" when it has none).
std::string run_id_of(const H5::H5File& file);

// The file's log_sequence (0 when it has none).
int64_t log_sequence(const H5::H5File& file);

// Converts an HDF5 library exception to a RunFileError naming the file and object.
RunFileError to_run_file_error(const H5::Exception& error, RunFileError::Kind kind, const std::string& path,
                               const std::string& object);

}  // namespace descentlab::store::format
