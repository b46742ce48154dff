#pragma once
// Whole-file reads and writes, one helper each: every rewrite in board goes through
// write_file_atomically (temp file in the same folder + rename), so no reader ever sees half a
// file.

#include <cstdint>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace board {

/// Whether an atomic write must also survive a crash (fdatasync the file, fsync the folder).
/// Records a person relies on (artifacts, board.yaml) do; caches and run bookkeeping (saved
/// prompts, pid files, the index) need only never be seen half-written.
enum class Durability { synced, unsynced };

/// Writes `content` to `file` atomically: a temp file in the same folder, made with `mode`
/// (less the umask), (fdatasync,) rename, (then fsync of the folder). Returns an empty string
/// on success, else one sentence naming the path and the cause.
std::string write_file_atomically(const std::filesystem::path& file,
                                  std::string_view content,
                                  Durability durability = Durability::synced,
                                  mode_t mode = 0644);

/// Whether a read follows a symbolic link at the file's own name.
enum class LinkAtName { followed, refused };

/// The whole of `file` (relative paths resolve against `dir_fd`, e.g. AT_FDCWD), or nullopt
/// when it cannot be opened or read, is not a regular file (a FIFO would block the reader, a
/// device never end), holds more than `max_bytes`, or is a link `at_name` refuses.
std::optional<std::string> read_whole_file(
    const std::filesystem::path& file,
    int dir_fd = AT_FDCWD,
    std::size_t max_bytes = std::numeric_limits<std::size_t>::max(),
    LinkAtName at_name = LinkAtName::followed);

/// `path` opened with `flags` (close-on-exec, the last component not followed) in one call
/// when none of its components, the last one included, is a symbolic link; -1 otherwise, with
/// errno set (ELOOP for a link, ENOTDIR for one with O_DIRECTORY; ENOSYS on a kernel before
/// openat2), for the caller to take a slower way that says which part is a link.
int open_with_no_link_on_the_way(const std::filesystem::path& path, int flags, mode_t mode = 0);

/// The path that reaches the file `fd` holds again, whatever its own path names by now
/// (`/proc/self/fd/N`): for reads, writes and `*at`-less calls pinned to an opened file.
std::filesystem::path path_of_descriptor(int fd);

/// The identity of a file when it was read: a replace changes the inode, an append the size,
/// any write the ctime, which (unlike the mtime) nothing sets back (`cp -p`, `touch -d`).
struct FileStamp {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = -1;
    std::int64_t ctime_ns = 0;
    friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

/// `file`'s stamp now, or nullopt when it cannot be statted (it is not there).
std::optional<FileStamp> stamp_of(const std::filesystem::path& file);

/// A time every change to a file from now on is stamped at or after, in ns since the epoch:
/// a file time at or after it cannot tell a change made before now from one made after (the
/// "racy" window git and ninja guard against too).
std::int64_t file_times_from_now_ns();

}  // namespace board
