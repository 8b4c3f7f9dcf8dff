#pragma once
// Durable replacement of a file (internal to core/store): the new bytes go to a temporary name beside the target,
// every write, fsync and close is checked, and only then is the temporary renamed over the target and its folder
// synced. Any failure removes the temporary and leaves the target as it was, and the error says what failed in plain
// words: a full disk names the folder, the bytes needed and the bytes free.
//
// The fault points can be made to fail on purpose (tests/test_run_file_faults.cpp): the injected failure takes the
// same path as a real one from the kernel, so the tests check what users would meet.

#include <cstddef>
#include <string>
#include <vector>

namespace descentlab::store {

// Reads a whole file; throws RunFileError (NotFound or WriteFailed for an I/O error) naming it.
std::vector<char> read_whole_file(const std::string& path);

// "<path>.tmp-<pid>": the temporary name beside `path` that this process writes a new version of it to. A writer
// removes those of writers that were killed (core/store/run_writer.cpp).
std::string temporary_for(const std::string& path);

// Writes `size` bytes to `temporary` (created new, mode 0644), fsyncs and closes it, renames it to `target` and
// fsyncs the folder. On failure before the rename the temporary is removed, `target` is untouched and
// RunFileError(WriteFailed) is thrown naming `target`. Once renamed, the commit stands: a failed folder sync (the
// rename might not survive a power cut) is returned as a warning, empty when all went well. With `held`, the new file
// is opened again and locked (flock, exclusive) before the rename, and `*held` is that open descriptor, the caller's
// to close: the file is never at `target` unlocked.
std::string replace_file_durably(const std::string& target, const std::string& temporary, const char* data, size_t size,
                                 int* held = nullptr);

// Appends `size` bytes at `offset` of the open file `descriptor` (`file`, the log of the run file `target`) and
// fsyncs it. On failure the file is cut back to `offset` (`*cut_back` says whether that worked) and
// RunFileError(WriteFailed) is thrown naming `target`, a full disk with the folder, the bytes needed and free.
void append_durably(int descriptor, unsigned long long offset, const char* data, size_t size, const std::string& target,
                    const std::string& file, bool* cut_back);

// One piece of a file written by write_file_durably.
struct FilePiece {
  const void* data;
  size_t size;
};

// Writes `pieces` one after another into `file` (created, or emptied if it exists; mode 0644), fdatasyncs and closes
// it, then fsyncs its folder: a file the commit of `target` (the run file) will name, so that once the run file is
// renamed into place its data is on disk (a checkpoint's tensors, written once). On failure `file` is removed and
// RunFileError(WriteFailed) is thrown naming `target`, a full disk with the folder, the bytes needed and free.
void write_file_durably(const std::string& target, const std::string& file, const std::vector<FilePiece>& pieces);

// Creates the folder `folder` for files of `target` if it is missing, and then fsyncs its parent so that the folder
// survives a power cut. Throws RunFileError(WriteFailed) naming `target` when either fails.
void make_folder_durably(const std::string& target, const std::string& folder);

// The free bytes for an unprivileged writer in `folder`, or -1 when the file system does not say.
long long free_bytes_in(const std::string& folder);

// "12.3 MB" style sizes for messages.
std::string megabytes_text(long long bytes);

namespace fault {

// Where a commit can be made to fail on purpose. Each injected failure fires once, with the given errno, at the
// call after the first `skip` calls at that point (so a test reaches the second file a commit writes).
enum class Point { Write, Fsync, Close, Rename, SyncFolder };
// Injected instead of an errno: the process kills itself (SIGKILL) just before that call, as a crash would.
inline constexpr int kKill = -9;
void inject(Point point, int error_number, int skip = 0);
void clear();

}  // namespace fault

}  // namespace descentlab::store
