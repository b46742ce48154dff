#include "support/files.hpp"

#include "support/unique_fd.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace board {
namespace {

std::string failure(const std::filesystem::path& path, int err) {
    return path.string() + ": " + std::strerror(err);
}

/// A name beside `file` no other writer uses at the same time: this process's id and a count.
std::filesystem::path temp_beside(const std::filesystem::path& file) {
    static std::atomic<unsigned> counter{0};
    return file.parent_path() / ("." + file.filename().string() + ".tmp-" +
                                 std::to_string(::getpid()) + "-" + std::to_string(counter++));
}

}  // namespace

std::string write_file_atomically(const std::filesystem::path& file,
                                  std::string_view content,
                                  Durability durability,
                                  mode_t mode) {
    const bool sync = durability == Durability::synced;
    const auto temp = temp_beside(file);
    UniqueFd fd{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)};
    if (!fd) return failure(temp, errno);
    std::size_t written = 0;
    while (written < content.size()) {
        const auto n = ::write(fd.get(), content.data() + written, content.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::unlink(temp.c_str());
            return failure(temp, err);
        }
        written += static_cast<std::size_t>(n);
    }
    if ((sync && ::fdatasync(fd.get()) != 0) || ::close(fd.release()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return failure(temp, err);
    }
    if (::rename(temp.c_str(), file.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return failure(file, err);
    }
    if (!sync) return {};
    // The new name must survive a crash too.
    const auto folder =
        file.parent_path().empty() ? std::filesystem::path{"."} : file.parent_path();
    if (UniqueFd dir{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
        dir && ::fsync(dir.get()) != 0)
        return failure(folder, errno);
    return {};
}

std::filesystem::path path_of_descriptor(int fd) {
    return std::filesystem::path{"/proc/self/fd"} / std::to_string(fd);
}

std::optional<std::string> read_whole_file(const std::filesystem::path& file,
                                           int dir_fd,
                                           std::size_t max_bytes,
                                           LinkAtName at_name) {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
    const int no_link = at_name == LinkAtName::refused ? O_NOFOLLOW : 0;
    UniqueFd fd{::openat(dir_fd, file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | no_link)};
    if (!fd) return std::nullopt;

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    if (st.st_size > 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes) return std::nullopt;
    std::string text;
    // The size is a hint (a file may grow while it is read; /proc files say 0).
    text.resize(st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : 4096);
    std::size_t done = 0;
    for (;;) {
        if (done > max_bytes) return std::nullopt;
        if (done == text.size()) text.resize(text.size() * 2);
        const ssize_t got = ::read(fd.get(), text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return std::nullopt;
        if (got == 0) break;
        done += static_cast<std::size_t>(got);
    }
    text.resize(done);
    return text;
}

std::optional<FileStamp> stamp_of(const std::filesystem::path& file) {
    struct stat st {};

    if (::stat(file.c_str(), &st) != 0) return std::nullopt;
    return FileStamp{
        st.st_dev,
        st.st_ino,
        st.st_size,
        static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

std::int64_t file_times_from_now_ns() {
    // File times come from a coarse clock up to one tick behind the real-time clock (or, with
    // multigrain timestamps, from the real-time clock itself), so: now less that tick.
    timespec now{};
    timespec tick{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    if (::clock_getres(CLOCK_REALTIME_COARSE, &tick) != 0) tick = timespec{0, 10'000'000};
    const auto ns = [](const timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 +
               static_cast<std::int64_t>(t.tv_nsec);
    };
    return ns(now) - ns(tick);
}

int open_with_no_link_on_the_way(const std::filesystem::path& path, int flags, mode_t mode) {
    open_how how{};
    how.flags = static_cast<unsigned>(flags | O_NOFOLLOW | O_CLOEXEC);
    how.mode = (flags & O_CREAT) != 0 ? mode : 0;
    how.resolve = RESOLVE_NO_SYMLINKS;
    UniqueFd fd{static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how))};
    if (!fd || (flags & O_PATH) == 0) return fd.release();

    // O_PATH with O_NOFOLLOW opens a link at the end as the link itself.
    struct stat st {};

    if (::fstat(fd.get(), &st) != 0) return -1;
    if (S_ISLNK(st.st_mode)) {
        errno = ELOOP;
        return -1;
    }
    return fd.release();
}

}  // namespace board
