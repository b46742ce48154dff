#include "event_log/scanner.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace board::event_log_detail {

LogResult<std::uint64_t> recover_torn_tail(int fd,
                                           const std::string& path,
                                           const Torn& torn,
                                           std::uint64_t end,
                                           std::vector<std::string>& warnings) {
    std::string bytes(static_cast<std::size_t>(end - torn.offset), '\0');
    auto got = pread_full(fd, bytes.data(), bytes.size(), torn.offset, path);
    if (auto* e = std::get_if<LogError>(&got)) return std::move(*e);
    bytes.resize(std::get<std::size_t>(got));
    // Keep the .torn file line-separated however many recoveries it collects.
    if (!bytes.empty() && bytes.back() != '\n') bytes += '\n';

    const std::string torn_path = path + ".torn";
    UniqueFd out{::open(torn_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
    if (!out) return errno_error(errno, "open", torn_path);
    if (auto e = write_once(out.get(), bytes, torn_path)) return std::move(*e);
    if (auto e = sync_data(out.get(), torn_path)) return std::move(*e);
    if (::ftruncate(fd, static_cast<off_t>(torn.offset)) != 0)
        return errno_error(errno, "ftruncate", path);
    if (auto synced = sync_data(fd, path)) return std::move(*synced);
    const std::uint64_t moved = end - torn.offset;
    warnings.push_back(fmt::format("{}:{}: recovered a torn tail ({}; {} bytes moved to {})",
                                   path,
                                   torn.line,
                                   torn.reason,
                                   moved,
                                   torn_path));
    return moved;
}

LogResult<UniqueFd> open_for_append(const std::filesystem::path& dir, const std::string& path) {
    UniqueFd fd{::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC)};
    if (fd) return fd;
    if (errno != ENOENT) return errno_error(errno, "open", path);
    fd = UniqueFd{::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
    if (!fd && errno == EEXIST) {
        fd = UniqueFd{::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC)};  // lost the race: fine
        if (fd) return fd;
    }
    if (!fd) {
        const int err = errno;
        if (err == ENOENT) {
            return LogError{LogError::Kind::not_found,
                            fmt::format("{}: no such ticket folder", dir.string())};
        }
        return errno_error(err, "create", path);
    }
    if (auto e = sync_directory(dir.string())) return std::move(*e);
    return fd;
}

}  // namespace board::event_log_detail
