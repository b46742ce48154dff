#include "event_log/scanner.hpp"

#include "support/files.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
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
    auto opened = open_log_file(torn_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (auto* e = std::get_if<LogError>(&opened)) return std::move(*e);
    const UniqueFd out = std::move(std::get<UniqueFd>(opened));
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

namespace {

/// When a component of the path is a link: the folder opened first without following it,
/// then the file in it without following it, each refusal said as what it is.
LogResult<UniqueFd> open_in_own_folder(const std::string& path, int flags, mode_t mode) {
    const std::filesystem::path file{path};
    // The folder: O_PATH opens it for openat alone, O_NOFOLLOW refuses it as a link.
    const std::string folder = file.parent_path().empty() ? "." : file.parent_path().string();
    const UniqueFd dir{::open(folder.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (!dir) {
        const int err = errno;
        if (err == ENOTDIR || err == ELOOP) {
            errno = err;
            return LogError{LogError::Kind::io,
                            fmt::format("{}: not a folder but a symbolic link or a file: a "
                                        "ticket's log is only read and written in a folder of "
                                        "the board's own",
                                        folder)};
        }
        errno = err;
        return errno_error(err, "open", folder);
    }
    const std::string name = file.filename().string();
    UniqueFd fd{::openat(dir.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode)};
    if (!fd) {
        const int err = errno;
        errno = err;
        if (err == ELOOP) {
            return LogError{LogError::Kind::io,
                            fmt::format("{}: a symbolic link: a ticket's log is a file of its "
                                        "own, never read or written through a link",
                                        path)};
        }
        return errno_error(err, "open", path);
    }
    return fd;
}

}  // namespace

LogResult<UniqueFd> open_log_file(const std::string& path,
                                  int flags,
                                  mode_t mode,
                                  FileStat* opened_as) {
    UniqueFd fd{open_with_no_link_on_the_way(path, flags, mode)};
    if (!fd) {
        auto opened = open_in_own_folder(path, flags, mode);
        if (auto* e = std::get_if<LogError>(&opened)) return std::move(*e);
        fd = std::move(std::get<UniqueFd>(opened));
    }

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0) return errno_error(errno, "fstat", path);
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return LogError{
            LogError::Kind::io,
            fmt::format("{}: not a regular file: a ticket's log is a file of its own", path)};
    }
    if (opened_as)
        *opened_as = FileStat{static_cast<std::uint64_t>(st.st_dev),
                              static_cast<std::uint64_t>(st.st_ino),
                              static_cast<std::uint64_t>(st.st_size)};
    return fd;
}

LogResult<UniqueFd> open_for_append(const std::filesystem::path& dir, const std::string& path) {
    auto opened = open_log_file(path, O_RDWR | O_APPEND);
    if (std::holds_alternative<UniqueFd>(opened)) return opened;
    if (errno != ENOENT) return opened;
    opened = open_log_file(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL, 0644);
    if (std::holds_alternative<LogError>(opened) && errno == EEXIST)
        opened = open_log_file(path, O_RDWR | O_APPEND);  // lost the race: fine
    if (auto* e = std::get_if<LogError>(&opened)) {
        if (e->kind == LogError::Kind::not_found) {
            return LogError{LogError::Kind::not_found,
                            fmt::format("{}: no such ticket folder", dir.string())};
        }
        return opened;
    }
    if (auto e = sync_directory(dir.string())) return std::move(*e);
    return opened;
}

}  // namespace board::event_log_detail
