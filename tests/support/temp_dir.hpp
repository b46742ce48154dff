#pragma once
// A scratch folder for tests: made fresh with mkdtemp, removed with everything in it when the
// object goes; and where tests that are about locks, not the disk, put theirs. Header-only, for
// any test binary (board_add_tests puts tests/ on the path).

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unistd.h>

namespace board::testing {

/// tmpfs when the machine has one, else the temp folder: for tests of locks and recovery, which
/// a disk's fdatasync would slow to minutes on a loaded machine (the benchmarks measure disks).
inline std::filesystem::path memory_backed_root() {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
    return std::filesystem::temp_directory_path();
}

class TempDir {
public:
    /// `<root>/<prefix>XXXXXX`; throws when it cannot be made (a test cannot go on without).
    explicit TempDir(std::string_view prefix,
                     const std::filesystem::path& root = std::filesystem::temp_directory_path()) {
        std::string pattern = (root / (std::string{prefix} + "XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("mkdtemp " + pattern + " failed");
        path_ = pattern;
    }

    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace board::testing
