#include "orchestrator/named_programs.hpp"

#include "support/utf8.hpp"

#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
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
            for (const auto& [form, folder] : forms)
                if (word.starts_with(form)) path = *folder / std::string{word.substr(form.size())};
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
bool runs_as_program(const GuardedFile& file) {
    static constexpr std::array<std::string_view, 12> script_types{
        ".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".lua"};
    if (file.kind == GuardedFile::Kind::absent) return false;
    const std::string type = file.path.extension().string();
    return (file.mode & 0111) != 0 || text_of(file).starts_with("#!") ||
           std::find(script_types.begin(), script_types.end(), type) != script_types.end();
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

}  // namespace

bool lies_where_agents_write(const fs::path& folder, const NamedProgramPlaces& places) {
    return !folder.empty() &&
           std::any_of(places.writable.begin(), places.writable.end(), [&](const auto& place) {
               return path_is_within(folder, place);
           });
}

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
            // The links on its way an agent could replace, outermost first: a person's
            // `~/.claude/hooks` that leads to their dotfiles, say.
            std::vector<GuardedFile> links;
            for (fs::path on_way = path.parent_path(); on_way.has_relative_path();
                 on_way = on_way.parent_path()) {
                std::error_code ec;
                if (!fs::is_symlink(fs::symlink_status(on_way, ec))) continue;
                const fs::path in = real_folder_of(on_way);
                if (writable(in) && !seen.contains(on_way.string()))
                    links.push_back(link_at(on_way, in));
            }
            const fs::path folder = real_folder_of(path);
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
            ++programs;
            for (auto it = links.rbegin(); it != links.rend(); ++it) {
                if (seen.insert(it->path.string()).second) keep(std::move(*it));
            }
            if (!writable(folder)) continue;
            if (state->kind == GuardedFile::Kind::link) {
                keep(link_at(path, folder));
                // The file it leads to, when an agent may write that too.
                std::error_code ec;
                const fs::path target = fs::weakly_canonical(path, ec);
                const fs::path target_folder = ec ? fs::path{} : real_folder_of(target);
                if (!writable(target_folder) || !seen.insert(target.string()).second) continue;
                state = guarded_state(target);
                if (!state || state->kind != GuardedFile::Kind::file) continue;
                state->leads_to = target_folder.string();
                keep(std::move(*state));
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
    for (const GuardedFile& file : settings)
        for (const fs::path& named : paths_named_in(text_of(file), places.home, places.variables))
            for (fs::path on_way = named; on_way.has_relative_path(); on_way = on_way.parent_path())
                if (!paths.insert(on_way.string()).second) break;  // and the folders above it
    return paths;
}

void as_taken(GuardedFile& now, const GuardedFile& was) {
    now.path = was.path;  // read through its held folder
    if (now.kind == GuardedFile::Kind::link) {
        now.link_text.reset();
        now.mode = 0777;
    }
    now.leads_to = was.leads_to;
}

void take_folder_of(GuardedFile& file) {
    if (const fs::path folder = real_folder_of(file.path); !folder.empty())
        file.leads_to = folder.string();
}

std::variant<HeldFolder, std::string> put_folder_back(
    const GuardedFile& was,
    const NamedProgramPlaces& places,
    const std::function<bool(const fs::path&)>& kept_link) {
    if (!was.leads_to)
        return fmt::format("{} was not put back: where it was is not known", was.path.string());
    if (real_folder_of(was.path).string() != *was.leads_to) {
        // Outermost first: a link an agent made where it may write gives way to a folder, a
        // folder that is gone is made again, each only inside a folder that is where it was.
        std::vector<fs::path> on_way;
        for (fs::path p = was.path.parent_path(); p.has_relative_path(); p = p.parent_path())
            on_way.push_back(p);
        for (auto it = on_way.rbegin(); it != on_way.rend(); ++it) {
            std::error_code ec;
            const auto status = fs::symlink_status(*it, ec);
            const bool link = fs::is_symlink(status);
            if ((!link && fs::exists(status)) || (link && kept_link(*it))) continue;
            if (!lies_where_agents_write(real_folder_of(*it), places)) break;
            if (link) fs::remove(*it, ec);
            if (fs::create_directory(*it, ec)) fs::permissions(*it, fs::perms::owner_all, ec);
        }
    }
    // The folder is checked by what the kernel says the descriptor holds, not by its path
    // again: whatever the path names after this, the writes go where the check looked.
    HeldFolder held{
        UniqueFd{::open(was.path.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)}, {}};
    std::error_code ec;
    fs::path holds;
    if (held.fd) {
        held.through = fs::path{"/proc/self/fd"} / std::to_string(held.fd.get());
        holds = fs::read_symlink(held.through, ec);
        if (!ec && holds.string() == *was.leads_to) return held;
    }
    return fmt::format(
        "{} was not put back: the folder it was in ({}) {} after an agent's run; it is tried "
        "again after the next run",
        was.path.string(),
        *was.leads_to,
        !held.fd ? std::string{"is gone"}
        : ec     ? "cannot be checked (" + ec.message() + ")"
                 : "leads to " + holds.string());
}

}  // namespace board::orchestrator
