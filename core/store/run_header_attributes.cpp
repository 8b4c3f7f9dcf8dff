// The run file's root attributes that say what a person and a branch made of the run (core/store/run_file_format.h):
// a person's name, tags and note (issue 54) and a branched run's lineage (issue 55).

#include "core/store/hdf5_io.h"
#include "core/store/run_file_format.h"

namespace descentlab::store::format {
namespace {

std::string text_of(const H5::Group& root, const char* name, const std::string& path) {
  try {
    return hdf5::string_attribute(root, name);
  } catch (const H5::Exception&) {
    throw RunFileError(RunFileError::Kind::MissingObject, path, std::string("/@") + name,
                       "missing or not a string attribute");
  }
}

}  // namespace

void read_annotation_and_lineage(const H5::Group& root, const std::string& path, RunHeader& header) {
  RunAnnotation stored;
  if (hdf5::has_attribute(root, kAnnotationName)) stored.name = text_of(root, kAnnotationName, path);
  if (hdf5::has_attribute(root, kAnnotationTags)) stored.tags = tags_from_text(text_of(root, kAnnotationTags, path));
  if (hdf5::has_attribute(root, kAnnotationNote)) stored.note = text_of(root, kAnnotationNote, path);
  header.annotation = checked_annotation(stored, path);  // a forged file's overlong name is refused by name
  if (!hdf5::has_attribute(root, kParentFile)) return;
  RunLineage lineage;
  lineage.parent_file = text_of(root, kParentFile, path);
  lineage.parent_run_id = text_of(root, kParentRunId, path);
  lineage.parent_checkpoint_sha256 = text_of(root, kParentCheckpointSha256, path);
  lineage.changes = text_of(root, kBranchChanges, path);
  try {
    lineage.branch_step = hdf5::int_attribute(root, kBranchStep);
  } catch (const H5::Exception&) {
    throw RunFileError(RunFileError::Kind::MissingObject, path, std::string("/@") + kBranchStep,
                       "missing or not an integer attribute");
  }
  header.lineage = lineage;
}

void write_annotation(H5::H5File& file, const RunAnnotation& annotation) {
  H5::Group root = file.openGroup("/");
  const auto set = [&](const char* name, const std::string& value) {
    if (!value.empty()) {
      hdf5::set_string_attribute(root, name, value);
    } else if (hdf5::has_attribute(root, name)) {
      root.removeAttr(name);
    }
  };
  set(kAnnotationName, annotation.name);
  set(kAnnotationTags, tags_text(annotation.tags));
  set(kAnnotationNote, annotation.note);
}

void write_lineage(H5::H5File& file, const std::optional<RunLineage>& lineage) {
  if (!lineage) return;
  H5::Group root = file.openGroup("/");
  hdf5::set_string_attribute(root, kParentFile, lineage->parent_file);
  hdf5::set_string_attribute(root, kParentRunId, lineage->parent_run_id);
  hdf5::set_string_attribute(root, kParentCheckpointSha256, lineage->parent_checkpoint_sha256);
  hdf5::set_int_attribute(root, kBranchStep, lineage->branch_step);
  hdf5::set_string_attribute(root, kBranchChanges, lineage->changes);
}

}  // namespace descentlab::store::format
