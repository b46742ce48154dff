#include "orchestrator/named_programs.hpp"

#include "support/files.hpp"
#include "support/utf8.hpp"

#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace board::orchestrator {
namespace fs = std::filesystem;

std::vector<fs::path> paths_named_in(std::string_view text,
                                     const fs::path& home,
                                     const NamingVariables& variables) {
    constexpr std::string_view word_ends = " \t\r\n\"'\\=,;|&()[]<>`";
    // Each way a word may start with a folder, and the folder.
    std::vector<std::pair<std::string, const fs::path*>> forms;
    const auto add = [&](const std::string& name, const fs::path& folder) {
        if (folder.empty()) return;
        forms.emplace_back("$" + name + "/", &folder);
        forms.emplace_back("${" + name + "}/", &folder);
    };
    if (!home.empty()) forms.emplace_back("~/", &home);
    add("HOME", home);
    for (const auto& [name, folder] : variables) add(name, folder);
    std::vector<fs::path> named;
    std::unordered_set<std::string> seen;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t start = text.find_first_not_of(word_ends, at);
        if (start == std::string_view::npos) break;
        const std::size_t end = std::min(text.find_first_of(word_ends, start), text.size());
        const std::string_view word = text.substr(start, end - start);
        at = end;
        fs::path path;
        if (word.starts_with('/')) {
            path = std::string{word};
        } else {
            for (const auto& [form, folder] : forms) {
                if (word.starts_with(form)) {
                    path = *folder / std::string{word.substr(form.size())};
                } else if (word == std::string_view{form}.substr(0, form.size() - 1)) {
                    // A shell's quoted variable: `"$CLAUDE_CONFIG_DIR"/hooks/x.sh`, its quotes
                    // escaped in JSON.
                    for (const std::string_view quote : {"\\\"", "\"", "'"}) {
                        const std::string_view rest = text.substr(end);
                        if (!rest.starts_with(quote) || rest.substr(quote.size(), 1) != "/")
                            continue;
                        const std::size_t from = end + quote.size();
                        const std::size_t to =
                            std::min(text.find_first_of(word_ends, from), text.size());
                        path = *folder / std::string{text.substr(from + 1, to - from - 1)};
                        at = to;
                        break;
                    }
                }
                if (!path.empty()) break;
            }
        }
        if (path.empty()) continue;
        path = path.lexically_normal();
        if (!path.has_filename() || path == path.root_path()) continue;
        if (seen.insert(path.string()).second) named.push_back(std::move(path));
    }
    return named;
}

namespace {

constexpr std::size_t most_programs = 64;
/// Each path looked at costs a few system calls at every baseline.
constexpr std::size_t most_paths_looked_at = 1024;

/// What a guarded path holds: a file's text, or that of the file a link leads to.
std::string_view text_of(const GuardedFile& file) {
    if (file.kind != GuardedFile::Kind::link) return file.content;
    return file.link_text ? std::string_view{*file.link_text} : std::string_view{};
}

/// A file a tool may run: executable, a script by its first line, or by its name one an
/// interpreter runs (`node ~/.claude/server.js`). A log or a state file a hook writes is
/// none of those, and stays the run's to change.
/// An absent one only by its name: one an agent may plant where the settings expect it.
bool runs_as_program(const GuardedFile& file) {
    static constexpr std::array<std::string_view, 12> script_types{
        ".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".lua"};
    const std::string type = file.path.extension().string();
    const bool by_name =
        std::find(script_types.begin(), script_types.end(), type) != script_types.end();
    if (file.kind == GuardedFile::Kind::absent) return by_name;
    return by_name || (file.mode & 0111) != 0 || text_of(file).starts_with("#!");
}

bool is_executable(const fs::path& path) {
    struct stat st {};

    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
}

/// The folder `path` is in, links on the way followed; empty when there is none.
fs::path real_folder_of(const fs::path& path) {
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(path.parent_path(), ec);
    return ec || !fs::is_directory(folder, ec) ? fs::path{} : folder;
}

/// `path` as the link it is, in `folder` (resolved).
GuardedFile link_at(const fs::path& path, const fs::path& folder) {
    std::error_code ec;
    GuardedFile link;
    link.path = path;
    link.kind = GuardedFile::Kind::link;
    link.content = fs::read_symlink(path, ec).string();
    link.mode = 0777;
    link.leads_to = folder.string();
    return link;
}

/// The folder `path` is in, resolved as far as it exists (an absent file's folder may be
/// absent too); empty when it cannot be.
fs::path folder_as_taken(const fs::path& path) {
    std::error_code ec;
    fs::path folder = fs::weakly_canonical(path.parent_path(), ec);
    return ec ? fs::path{} : folder;
}

/// What the kernel says `fd` holds (empty when /proc cannot say).
fs::path path_held(int fd) {
    std::error_code ec;
    fs::path held = fs::read_symlink(path_of_descriptor(fd), ec);
    return ec ? fs::path{} : held;
}

}  // namespace

fs::path link_leads_to(const GuardedFile& link) {
    const fs::path from = link.leads_to ? fs::path{*link.leads_to} : link.path.parent_path();
    return (from / link.content).lexically_normal();
}

bool lies_where_agents_write(const fs::path& folder, const NamedProgramPlaces& places) {
    return !folder.empty() &&
           std::any_of(places.writable.begin(), places.writable.end(), [&](const auto& place) {
               return path_is_within(folder, place);
           });
}

namespace {

/// The links on `path`'s way that lie where an agent may write, outermost first, as the
/// links they are: a person's `~/.claude/hooks` that leads to their dotfiles, say.
std::vector<GuardedFile> links_on_the_way(const fs::path& path, const NamedProgramPlaces& places) {
    std::vector<GuardedFile> links;
    for (fs::path on_way = path.parent_path(); on_way.has_relative_path();
         on_way = on_way.parent_path()) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(on_way, ec))) continue;
        const fs::path in = real_folder_of(on_way);
        if (lies_where_agents_write(in, places)) links.insert(links.begin(), link_at(on_way, in));
    }
    return links;
}

/// What the link at `path` leads to, a link at a time, as far as an agent may change it: each
/// further link, and the links on each one's way, where an agent may write them, as the links
/// they are; and the file at the end when an agent may write it. Each named as the link before
/// it names it (a daemon's recovery checks each against the link before it).
std::vector<GuardedFile> led_to_by(const fs::path& path, const NamedProgramPlaces& places) {
    constexpr int most_links = 8;
    std::vector<GuardedFile> kept;
    fs::path at = path;
    for (int hop = 0; hop < most_links; ++hop) {
        std::error_code ec;
        const fs::path content = fs::read_symlink(at, ec);
        const fs::path from = real_folder_of(at);  // a `..` in it counts from there
        if (ec || from.empty()) break;
        const fs::path next = (from / content).lexically_normal();
        for (auto& link : links_on_the_way(next, places)) kept.push_back(std::move(link));
        const fs::path folder = real_folder_of(next);
        const bool writable = lies_where_agents_write(folder, places);
        if (fs::is_symlink(fs::symlink_status(next, ec))) {
            if (writable) kept.push_back(link_at(next, folder));
            at = next;
            continue;
        }
        auto state = writable ? guarded_state(next) : std::nullopt;
        if (state && state->kind == GuardedFile::Kind::file) {
            state->leads_to = folder.string();
            kept.push_back(std::move(*state));
        }
        break;
    }
    return kept;
}

}  // namespace

NamedPrograms take_named_programs(const std::vector<GuardedFile>& settings,
                                  const NamedProgramPlaces& places,
                                  const std::function<bool(const fs::path&)>& guarded_already) {
    NamedPrograms named;
    if (places.writable.empty()) return named;
    const auto writable = [&](const fs::path& folder) {
        return lies_where_agents_write(folder, places);
    };
    std::unordered_set<std::string> seen;
    std::size_t looked_at = 0;
    std::size_t programs = 0;
    const auto keep = [&](GuardedFile entry) {
        if (valid_utf8_prefix(entry.content) != entry.content.size()) {  // the kept file is JSON
            named.unchecked.push_back(fmt::format(
                "{} is named in a tool's settings as a program to run, but is not text: not "
                "checked after this run",
                entry.path.string()));
            return;
        }
        named.kept.push_back(std::move(entry));
    };
    // Each of `entries` not kept already, as a settings file or for another program.
    const auto keep_new = [&](std::vector<GuardedFile> entries) {
        for (auto& entry : entries)
            if (!guarded_already(entry.path) && seen.insert(entry.path.string()).second)
                keep(std::move(entry));
    };
    for (const GuardedFile& file : settings) {
        for (const fs::path& path : paths_named_in(text_of(file), places.home, places.variables)) {
            if (guarded_already(path) || !seen.insert(path.string()).second) continue;
            if (++looked_at > most_paths_looked_at || programs == most_programs) {
                named.unchecked.push_back(fmt::format(
                    "the tools' settings name more than {} programs or {} paths: {} and those "
                    "after it in {} were not checked",
                    most_programs,
                    most_paths_looked_at,
                    path.string(),
                    file.path.string()));
                return named;
            }
            std::vector<GuardedFile> links = links_on_the_way(path, places);
            const fs::path folder = folder_as_taken(path);
            if (links.empty() && !writable(folder)) continue;
            auto state = guarded_state(path);
            if (!state) {
                if (writable(folder) && is_executable(path))
                    named.unchecked.push_back(fmt::format(
                        "{} is named in a tool's settings as a program to run, but is over 1 "
                        "MiB or cannot be read: not checked after this run",
                        path.string()));
                continue;
            }
            if (!runs_as_program(*state)) continue;
            if (state->kind == GuardedFile::Kind::absent) {
                // Kept absent only in the settings' own folder (`hooks/check.sh`), where the
                // tool's files are; not counted as a program. A script an approval names in
                // shared temp (`Bash(python3 /tmp/t.py)`) is a run's own to make.
                const fs::path own =
                    file.leads_to ? fs::path{*file.leads_to} : folder_as_taken(file.path);
                keep_new(links);  // a person's, wherever the script would be
                if (!writable(folder) || !path_is_within(folder, own)) continue;
                state->leads_to = folder.string();
                keep(std::move(*state));
                continue;
            }
            ++programs;
            keep_new(links);
            if (!writable(folder)) continue;
            if (state->kind == GuardedFile::Kind::link) {
                keep(link_at(path, folder));
                keep_new(led_to_by(path, places));
                continue;
            }
            state->leads_to = folder.string();
            keep(std::move(*state));
        }
    }
    return named;
}

std::unordered_set<std::string> named_or_on_the_way(const std::vector<GuardedFile>& settings,
                                                    const NamedProgramPlaces& places) {
    std::unordered_set<std::string> paths;
    const auto add = [&](const fs::path& path) {
        for (fs::path on_way = path; on_way.has_relative_path(); on_way = on_way.parent_path())
            if (!paths.insert(on_way.string()).second) break;  // and the folders above it
    };
    for (const GuardedFile& file : settings) {
        add(file.path);
        for (const fs::path& named : paths_named_in(text_of(file), places.home, places.variables))
            add(named);
    }
    return paths;
}

void as_taken(GuardedFile& now, const GuardedFile& was) {
    now.path = was.path;  // read through its held folder
    if (now.kind == GuardedFile::Kind::link && was.kind == GuardedFile::Kind::link) {
        now.link_text = was.link_text;
        now.mode = was.mode;
    }
    now.leads_to = was.leads_to;
}

std::vector<GuardedFile> with_its_way(GuardedFile file, const NamedProgramPlaces& places) {
    std::vector<GuardedFile> way = links_on_the_way(file.path, places);
    if (const fs::path folder = folder_as_taken(file.path); !folder.empty())
        file.leads_to = folder.string();
    std::vector<GuardedFile> beyond;
    if (file.kind == GuardedFile::Kind::link) beyond = led_to_by(file.path, places);
    way.push_back(std::move(file));
    for (auto& entry : beyond) way.push_back(std::move(entry));
    return way;
}

FolderCheck put_folder_back(const GuardedFile& was,
                            const NamedProgramPlaces& places,
                            const std::function<bool(const fs::path&)>& kept_link) {
    FolderCheck check;
    const auto said = [&](FolderCheck::Outcome outcome, const std::string& why) {
        check.outcome = outcome;
        check.line = fmt::format(
            "{} was not put back: the folder it was in ({}) {}",
            was.path.string(),
            was.leads_to.value_or(was.path.parent_path().string()),
            outcome == FolderCheck::Outcome::changed
                ? why + ", where no agent may write; it is taken as it is when runs next begin"
                : why + " after an agent's run; it is tried again after the next run");
        return std::move(check);
    };
    if (!was.leads_to) return said(FolderCheck::Outcome::refused, "is not known");
    const fs::path folder = *was.leads_to;  // resolved when taken: a folder at every step
    if (!folder.is_absolute()) return said(FolderCheck::Outcome::refused, "is not known");
    const bool make = was.kind != GuardedFile::Kind::absent;
    UniqueFd at{::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)};
    // Which folders agents may write is told by what each descriptor holds.
    if (!at || path_held(at.get()) != "/")
        return said(FolderCheck::Outcome::refused, "cannot be checked (/proc is not mounted)");
    fs::path so_far = folder.root_path();
    for (const fs::path& part : folder.relative_path()) {
        if (!at) return said(FolderCheck::Outcome::refused, "cannot be opened");
        so_far /= part;
        const auto open_part = [&](int follow) {
            return UniqueFd{
                ::openat(at.get(), part.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | follow)};
        };

        struct stat st {};

        int found = ::fstatat(at.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
        if (found == EACCES && lies_where_agents_write(path_held(at.get()), places)) {
            // An agent may take the owner's rights away (Landlock does not guard chmod).
            const fs::path through = path_of_descriptor(at.get());

            struct stat own {};

            if (::stat(through.c_str(), &own) == 0 && own.st_uid == ::geteuid() &&
                ::chmod(through.c_str(), (own.st_mode & 07777) | S_IRWXU) == 0)
                found =
                    ::fstatat(at.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
        }
        if (found == 0 && S_ISDIR(st.st_mode)) {
            at = open_part(O_NOFOLLOW);
            continue;
        }
        if (found != 0 && found != ENOENT)
            return said(
                FolderCheck::Outcome::refused,
                fmt::format("cannot be checked ({}: {})", so_far.string(), std::strerror(found)));
        const bool link = found == 0 && S_ISLNK(st.st_mode);
        const bool agents_write_here = lies_where_agents_write(path_held(at.get()), places);
        // A link or a file where a folder was, or the folder gone: an agent's doing only where
        // agents may write.
        const std::string what =
            found != 0 ? fmt::format("is gone ({} was removed)", so_far.string())
            : link     ? fmt::format("leads elsewhere ({} is a link now)", so_far.string())
                       : fmt::format("is not there ({} is not a folder)", so_far.string());
        if (!make) {
            // Absent it was, and absent it is: nothing to put back, no folder made for it; a
            // link an agent made on its way goes.
            if (link && agents_write_here && !kept_link(so_far) &&
                ::unlinkat(at.get(), part.c_str(), 0) == 0)
                check.line = fmt::format(
                    "{}: a link an agent made on its way ({}) was removed after its run",
                    was.path.string(),
                    so_far.string());
            check.outcome = FolderCheck::Outcome::gone;
            return check;
        }
        if (!agents_write_here) return said(FolderCheck::Outcome::changed, what);
        if (found == 0 && !link) return said(FolderCheck::Outcome::refused, what);
        if (link && ::unlinkat(at.get(), part.c_str(), 0) != 0)
            return said(FolderCheck::Outcome::refused, what);
        if (::mkdirat(at.get(), part.c_str(), 0700) != 0 && errno != EEXIST)
            return said(FolderCheck::Outcome::refused,
                        fmt::format("is gone and cannot be made again ({})", std::strerror(errno)));
        at = open_part(O_NOFOLLOW);
    }
    if (!at) return said(FolderCheck::Outcome::refused, "cannot be opened");
    const fs::path holds = path_held(at.get());
    if (holds.empty())
        return said(FolderCheck::Outcome::refused, "cannot be checked (/proc is not mounted)");
    if (holds != folder) return said(FolderCheck::Outcome::refused, "leads to " + holds.string());
    check.outcome = FolderCheck::Outcome::held;
    check.folder.through = path_of_descriptor(at.get());
    check.folder.fd = std::move(at);
    return check;
}

}  // namespace board::orchestrator
