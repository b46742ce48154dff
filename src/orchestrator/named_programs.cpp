#include "orchestrator/named_programs.hpp"

#include "support/utf8.hpp"

#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <sys/stat.h>
#include <unordered_set>

namespace board::orchestrator {
namespace fs = std::filesystem;

std::vector<fs::path> paths_named_in(std::string_view text, const fs::path& home) {
    constexpr std::string_view word_ends = " \t\r\n\"'\\=,;|&()[]<>`";
    constexpr std::array<std::string_view, 3> home_forms{"~/", "$HOME/", "${HOME}/"};
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
        } else if (!home.empty()) {
            for (const std::string_view form : home_forms)
                if (word.starts_with(form)) path = home / std::string{word.substr(form.size())};
        }
        if (path.empty()) continue;
        path = path.lexically_normal();
        if (!path.has_filename() || path == path.root_path()) continue;
        if (seen.insert(path.string()).second) named.push_back(std::move(path));
    }
    return named;
}

namespace {

constexpr std::size_t most_paths_looked_at = 64;

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

NamedPrograms take_named_programs(const std::vector<GuardedFile>& settings,
                                  const NamedProgramPlaces& places,
                                  const std::function<bool(const fs::path&)>& guarded_already) {
    NamedPrograms named;
    if (places.writable.empty()) return named;
    const auto writable = [&](const fs::path& folder) {
        return !folder.empty() &&
               std::any_of(places.writable.begin(), places.writable.end(), [&](const auto& place) {
                   return path_is_within(folder, place);
               });
    };
    std::unordered_set<std::string> seen;
    std::size_t looked_at = 0;
    for (const GuardedFile& file : settings) {
        for (const fs::path& path : paths_named_in(text_of(file), places.home)) {
            if (guarded_already(path) || !seen.insert(path.string()).second) continue;
            if (++looked_at > most_paths_looked_at) {
                named.unchecked.push_back(fmt::format(
                    "{} names more than {} paths: {} and those after it were not checked",
                    file.path.string(),
                    most_paths_looked_at,
                    path.string()));
                return named;
            }
            // The links on its way an agent could replace, outermost first: a person's
            // `~/.claude/hooks` that leads to their dotfiles, say.
            std::vector<GuardedFile> links;
            for (fs::path on_way = path.parent_path(); on_way.has_relative_path();
                 on_way = on_way.parent_path()) {
                std::error_code ec;
                if (!fs::is_symlink(fs::symlink_status(on_way, ec))) continue;
                const fs::path folder = real_folder_of(on_way);
                if (writable(folder) && seen.insert(on_way.string()).second)
                    links.push_back(link_at(on_way, folder));
            }
            for (auto it = links.rbegin(); it != links.rend(); ++it)
                named.kept.push_back(std::move(*it));

            const fs::path folder = real_folder_of(path);
            if (!writable(folder)) continue;
            auto state = guarded_state(path);
            if (!state) {
                if (is_executable(path))
                    named.unchecked.push_back(fmt::format(
                        "{} is named in a tool's settings as a program to run, but is over 1 "
                        "MiB or cannot be read: not checked after this run",
                        path.string()));
                continue;
            }
            if (!runs_as_program(*state)) continue;
            if (state->kind == GuardedFile::Kind::link) {
                named.kept.push_back(link_at(path, folder));
                continue;
            }
            if (valid_utf8_prefix(state->content) != state->content.size()) {
                named.unchecked.push_back(
                    fmt::format("{} is named in a tool's settings as a program to run, but is not "
                                "text: not checked after this run",
                                path.string()));
                continue;
            }
            state->leads_to = folder.string();
            named.kept.push_back(std::move(*state));
        }
    }
    return named;
}

bool may_be_named(const fs::path& path,
                  const std::vector<GuardedFile>& settings,
                  const fs::path& home) {
    for (const GuardedFile& file : settings)
        for (const fs::path& named : paths_named_in(text_of(file), home))
            for (fs::path on_way = named; on_way.has_relative_path(); on_way = on_way.parent_path())
                if (on_way == path) return true;
    return false;
}

void as_taken(GuardedFile& now, const GuardedFile& was) {
    if (now.kind == GuardedFile::Kind::link) {
        now.link_text.reset();
        now.mode = 0777;
    }
    now.leads_to = was.leads_to;
}

std::optional<std::string> not_to_put_back(const GuardedFile& was) {
    const fs::path folder = real_folder_of(was.path);
    if (folder.empty())
        return fmt::format("{}: its folder is gone, nothing was put back", was.path.string());
    if (was.leads_to && folder.string() != *was.leads_to)
        return fmt::format(
            "{} was not put back: a folder on its way was changed during an agent's run and "
            "leads to {} now (it was {}); check it, it is a program a tool runs, unconfined",
            was.path.string(),
            folder.string(),
            *was.leads_to);
    return std::nullopt;
}

}  // namespace board::orchestrator
