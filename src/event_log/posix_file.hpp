#pragma once
// Thin POSIX helpers for the event log: the ticket lock with a deadline, and writes that
// report errno with the file's name. Fds are held in board::UniqueFd (closing one releases any
// flock taken through it); every fd is opened O_CLOEXEC so agents the daemon launches never
// inherit a log or its lock.

#include <board/event_log.hpp>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace board::event_log_detail {

/// Fills `words` with random bits from the kernel (getrandom), falling back to
/// std::random_device where there is none (a kernel before 3.17, a seccomp filter). Not
/// std::random_device first: its start-up asks the CPU about RDRAND with cpuid, which traps
/// to the hypervisor on a VM (tens of microseconds each).
void random_words(std::span<std::uint64_t> words) noexcept;

/// `<what> <path>: <strerror(err)>`.
LogError errno_error(int err, std::string_view what, const std::string& path);

/// Identity and size of an open file.
struct FileStat {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t size = 0;
};

/// fstat, or an io error naming `path`.
LogResult<FileStat> stat_fd(int fd, const std::string& path);

/// Takes an exclusive flock on `fd`, polling until `timeout` has passed (flock itself has no
/// timeout, and a signal-based one would fight the daemon's own handlers).
std::optional<LogError> lock_exclusive(int fd,
                                       const std::string& path,
                                       std::chrono::milliseconds timeout);

/// Reads exactly `size` bytes at `offset` unless the file ends first; returns the count read.
LogResult<std::size_t> pread_full(
    int fd, char* out, std::size_t size, std::uint64_t offset, const std::string& path);

/// Appends `bytes` to `fd` in ONE write() (retried only if interrupted before writing
/// anything). A short write is an error: the caller truncates the partial batch away.
std::optional<LogError> write_once(int fd, std::string_view bytes, const std::string& path);

/// fdatasync with the error named.
std::optional<LogError> sync_data(int fd, const std::string& path);

/// fsyncs a directory so a file created in it survives a crash.
std::optional<LogError> sync_directory(const std::string& dir);

}  // namespace board::event_log_detail
