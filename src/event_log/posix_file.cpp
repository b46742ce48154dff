#include "event_log/posix_file.hpp"

#include "support/unique_fd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace board::event_log_detail {

void random_words(std::span<std::uint64_t> words) noexcept {
    auto* bytes = reinterpret_cast<unsigned char*>(words.data());
    const std::size_t size = words.size_bytes();
    std::size_t got = 0;
    while (got < size) {
        const ssize_t n = ::getrandom(bytes + got, size - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got == size) return;
    try {
        std::random_device device;
        for (auto& word : words) word = (std::uint64_t{device()} << 32) ^ device();
    } catch (...) {
        // No entropy source at all: the words keep what getrandom gave, if anything.
    }
}

LogError errno_error(int err, std::string_view what, const std::string& path) {
    const auto kind = err == ENOENT ? LogError::Kind::not_found : LogError::Kind::io;
    return LogError{kind, fmt::format("{}: {} failed: {}", path, what, std::strerror(err))};
}

LogResult<FileStat> stat_fd(int fd, const std::string& path) {
    struct stat st {};

    if (::fstat(fd, &st) != 0) return errno_error(errno, "fstat", path);
    return FileStat{static_cast<std::uint64_t>(st.st_dev),
                    static_cast<std::uint64_t>(st.st_ino),
                    static_cast<std::uint64_t>(st.st_size)};
}

std::optional<LogError> lock_exclusive(int fd,
                                       const std::string& path,
                                       std::chrono::milliseconds timeout) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    // Start with short naps: a writer holds the lock for about one fdatasync (~0.25 ms here).
    auto nap = std::chrono::microseconds{20};
    for (;;) {
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return std::nullopt;
        const int err = errno;
        if (err == EINTR) continue;
        if (err != EWOULDBLOCK) return errno_error(err, "flock", path);
        const auto now = Clock::now();
        if (now >= deadline) {
            return LogError{
                LogError::Kind::lock_timeout,
                fmt::format(
                    "{}: another writer held the lock for more than {} ms", path, timeout.count())};
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(nap, deadline - now));
        nap = std::min(nap * 2, std::chrono::microseconds{1000});
    }
}

LogResult<std::size_t> pread_full(
    int fd, char* out, std::size_t size, std::uint64_t offset, const std::string& path) {
    std::size_t done = 0;
    while (done < size) {
        const auto n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_error(errno, "read", path);
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

std::optional<LogError> write_once(int fd, std::string_view bytes, const std::string& path) {
    for (;;) {
        const auto n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error(errno, "write", path);
        if (static_cast<std::size_t>(n) != bytes.size()) {
            return LogError{
                LogError::Kind::io,
                fmt::format("{}: short write ({} of {} bytes; disk full?)", path, n, bytes.size())};
        }
        return std::nullopt;
    }
}

std::optional<LogError> sync_data(int fd, const std::string& path) {
    if (::fdatasync(fd) != 0) return errno_error(errno, "fdatasync", path);
    return std::nullopt;
}

std::optional<LogError> sync_directory(const std::string& dir) {
    UniqueFd fd{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (!fd) return errno_error(errno, "open", dir);
    if (::fsync(fd.get()) != 0) return errno_error(errno, "fsync", dir);
    return std::nullopt;
}

}  // namespace board::event_log_detail
