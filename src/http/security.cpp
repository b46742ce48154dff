#include "http/security.hpp"

#include "support/unique_fd.hpp"

#include <board/board_dir.hpp>

#include <boost/url/authority_view.hpp>
#include <boost/url/parse.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace board::http {
namespace {

using Fd = UniqueFd;

bool read_all(int fd, std::string& out, std::uint64_t limit) {
    char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > limit) return false;
    }
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::optional<std::string> load_or_create_token(const fs::path& board,
                                                bool& generated,
                                                std::string& error) {
    generated = false;
    const auto dir = private_folder(board);
    if (!dir) {
        error = dir.error().message;
        return std::nullopt;
    }
    const fs::path file = dir.value() / "http-token";
    Fd out{::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)};
    if (out) {
        std::array<unsigned char, 32> raw{};
        Fd random{::open("/dev/urandom", O_RDONLY | O_CLOEXEC)};
        if (!random ||
            ::read(random.get(), raw.data(), raw.size()) != static_cast<ssize_t>(raw.size())) {
            error = "cannot read /dev/urandom";
            ::unlink(file.c_str());
            return std::nullopt;
        }
        static constexpr char digits[] = "0123456789abcdef";
        std::string token;
        for (unsigned char b : raw) {
            token.push_back(digits[b >> 4]);
            token.push_back(digits[b & 15]);
        }
        const std::string line = token + "\n";
        if (::write(out.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
            ::fsync(out.get()) != 0) {
            error = "cannot write " + file.string() + ": " + std::strerror(errno);
            ::unlink(file.c_str());
            return std::nullopt;
        }
        generated = true;
        return token;
    }
    if (errno != EEXIST) {
        error = "cannot create " + file.string() + ": " + std::strerror(errno);
        return std::nullopt;
    }
    Fd in{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};

    struct stat st {};

    if (!in || ::fstat(in.get(), &st) != 0) {
        error = "cannot read " + file.string() + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if ((st.st_mode & 077) != 0) {
        error = file.string() + " is readable or writable by others: chmod 600 it";
        return std::nullopt;
    }
    std::string token;
    if (!read_all(in.get(), token, 4096)) {
        error = "cannot read " + file.string();
        return std::nullopt;
    }
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
        token.pop_back();
    if (token.size() < 16) {
        error = file.string() + " holds no token (at least 16 characters); delete it to make one";
        return std::nullopt;
    }
    return token;
}

bool same_token(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::string presented_token(std::string_view authorization) {
    constexpr std::string_view bearer = "Bearer ";
    if (authorization.substr(0, bearer.size()) == bearer)
        return std::string{trim(authorization.substr(bearer.size()))};
    return {};
}

std::optional<Target> parse_target(std::string_view target) {
    // origin-form (RFC 9112 §3.2.1): an absolute path and an optional query, nothing else.
    const auto url = boost::urls::parse_origin_form(target);
    if (!url) return std::nullopt;
    // Decoded text may hold any byte but NUL: no name on disk or in a log ends early.
    const auto has_nul = [](std::string_view text) {
        return text.find('\0') != std::string_view::npos;
    };
    Target out;
    for (const std::string segment : url->segments()) {
        if (segment.empty()) continue;
        if (has_nul(segment)) return std::nullopt;
        out.segments.push_back(segment);
    }
    for (const auto& param : url->params()) {  // `+` is a space in a query
        if (param.key.empty()) continue;
        if (has_nul(param.key) || has_nul(param.value)) return std::nullopt;
        out.query[param.key] = param.value;
    }
    return out;
}

bool host_is_loopback(std::string_view host) {
    // An authority as RFC 3986 reads it: `localhost:evil.example` has no port, so it is no
    // authority at all, not `localhost`.
    const auto authority = boost::urls::parse_authority(host);
    if (!authority || authority->has_userinfo()) return false;
    switch (authority->host_type()) {
        case boost::urls::host_type::ipv4:
            return authority->host_ipv4_address().is_loopback();
        case boost::urls::host_type::ipv6:
            return authority->host_ipv6_address().is_loopback();
        case boost::urls::host_type::name:
            return authority->encoded_host() == "localhost";
        default:
            return false;
    }
}

bool is_valid_artifact_name(std::string_view name) {
    if (name.empty() || name.size() > 128 || name.front() == '.') return false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (!ok) return false;
    }
    return name.find("..") == std::string_view::npos;
}

std::optional<std::string> read_confined(const fs::path& ticket_dir,
                                         std::string_view name,
                                         std::uint64_t max_bytes,
                                         bool& missing,
                                         std::string& error) {
    missing = false;
    if (!is_valid_artifact_name(name)) {
        missing = true;
        error = "\"" + std::string{name} + "\" is not an artifact file name";
        return std::nullopt;
    }
    Fd dir{::open(ticket_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (!dir) {
        missing = errno == ENOENT;
        error = "cannot open the ticket folder: " + std::string{std::strerror(errno)};
        return std::nullopt;
    }
    const std::string file{name};
    Fd in{::openat(dir.get(), file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
    if (!in) {
        missing = errno == ENOENT;
        error = errno == ELOOP ? file + " is a symbolic link: not served"
                               : "cannot open " + file + ": " + std::strerror(errno);
        return std::nullopt;
    }

    struct stat st {};

    if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        error = file + " is not a regular file";
        return std::nullopt;
    }
    if (st.st_nlink > 1) {
        // Another name for the same file may be anywhere (a hard link to a secret).
        error = file + " has other hard links: not read";
        return std::nullopt;
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        error = file + " is larger than " + std::to_string(max_bytes) + " bytes";
        return std::nullopt;
    }
    std::string out;
    if (!read_all(in.get(), out, max_bytes)) {
        error = "cannot read " + file;
        return std::nullopt;
    }
    return out;
}

}  // namespace board::http
