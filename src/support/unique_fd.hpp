#pragma once
// The one owner of a file descriptor in board: closed when it goes out of scope (which also
// releases a flock taken through it), movable, never copied.

#include <unistd.h>

namespace board {

class UniqueFd {
public:
    UniqueFd() = default;

    explicit UniqueFd(int fd) noexcept
        : fd_(fd) {}

    ~UniqueFd() { reset(); }

    UniqueFd(UniqueFd&& other) noexcept
        : fd_(other.release()) {}

    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }

    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;

    int get() const noexcept { return fd_; }

    explicit operator bool() const noexcept { return fd_ >= 0; }

    /// Gives the descriptor up without closing it.
    int release() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

    /// Closes the descriptor held (if any) and holds `fd` instead.
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

}  // namespace board
