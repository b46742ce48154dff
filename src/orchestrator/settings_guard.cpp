#include "orchestrator/settings_guard.hpp"

#include "orchestrator/named_programs.hpp"
#include "orchestrator/state_members.hpp"
#include "support/files.hpp"
#include "support/unique_fd.hpp"

#include <board/board_dir.hpp>
#include <board/sandbox.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <unordered_set>

namespace board::orchestrator {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::size_t max_settings_bytes = 1u << 20;
/// Claude Code's state holds every project's history: far more than its settings (people
/// report files of 100 MB).
constexpr std::size_t max_state_bytes = 512u << 20;

std::string_view kind_name(GuardedFile::Kind kind) {
    return kind == GuardedFile::Kind::file   ? "file"
           : kind == GuardedFile::Kind::link ? "link"
                                             : "absent";
}

std::string encode(const std::vector<GuardedFile>& files) {
    json::array out;
    for (const auto& f : files) {
        json::object o{{"path", f.path.string()},
                       {"kind", kind_name(f.kind)},
                       {"content", f.content},
                       {"mode", f.mode}};
        if (f.link_text) o["link_text"] = *f.link_text;
        if (f.leads_to) o["leads_to"] = *f.leads_to;
        out.push_back(std::move(o));
    }
    return json::serialize(out) + "\n";
}

std::vector<GuardedFile> decode(const std::string& text) {
    std::vector<GuardedFile> files;
    boost::system::error_code ec;
    const auto value = json::parse(text, ec);
    if (ec || !value.is_array()) return files;
    for (const auto& item : value.get_array()) {
        const auto* o = item.if_object();
        if (!o || !o->contains("path") || !o->at("path").is_string()) continue;
        GuardedFile f;
        f.path = std::string{o->at("path").get_string()};
        const auto* kind = o->if_contains("kind");
        const std::string_view k =
            kind && kind->is_string() ? std::string_view{kind->get_string()} : std::string_view{};
        if (k != "file" && k != "link" && k != "absent") continue;  // nothing to act on
        f.kind = k == "file"   ? GuardedFile::Kind::file
                 : k == "link" ? GuardedFile::Kind::link
                               : GuardedFile::Kind::absent;
        if (const auto* c = o->if_contains("content"); c && c->is_string())
            f.content = std::string{c->get_string()};
        if (const auto* t = o->if_contains("link_text"); t && t->is_string())
            f.link_text = std::string{t->get_string()};
        if (const auto* t = o->if_contains("leads_to"); t && t->is_string())
            f.leads_to = std::string{t->get_string()};
        // An older daemon kept no mode: the one it wrote with.
        if (const auto* m = o->if_contains("mode"); m && m->is_uint64() && m->get_uint64() <= 07777)
            f.mode = static_cast<unsigned>(m->get_uint64());
        else if (m && m->is_int64() && m->get_int64() >= 0 && m->get_int64() <= 07777)
            f.mode = static_cast<unsigned>(m->get_int64());
        files.push_back(std::move(f));
    }
    return files;
}

/// The permission bits of the file `path` names (through a link), or 0644.
unsigned mode_of(const fs::path& path) {
    struct stat st {};

    return ::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & 07777) : 0644;
}

}  // namespace

std::optional<GuardedFile> guarded_state(const fs::path& path) {
    GuardedFile state;
    state.path = path;
    std::error_code ec;
    const auto status = fs::symlink_status(path, ec);
    if (ec || !fs::exists(status)) return state;
    state.mode = mode_of(path);
    if (fs::is_symlink(status)) {
        state.kind = GuardedFile::Kind::link;
        state.content = fs::read_symlink(path, ec).string();
        if (ec) return std::nullopt;
        state.link_text = read_whole_file(path, AT_FDCWD, max_settings_bytes);
        return state;
    }
    // Not through a link put in its place since the look above (another run's agent): what
    // it leads to may be a file no agent may read, and a changed text is kept where they can.
    auto text = read_whole_file(path, AT_FDCWD, max_settings_bytes, LinkAtName::refused);
    if (!text) return std::nullopt;  // a folder, a device, too big, a link now: put back
    state.kind = GuardedFile::Kind::file;
    state.content = std::move(*text);
    return state;
}

namespace {

/// The text of the Claude state file at `path`, and its guarded members: none when it cannot
/// be read whole or is not JSON. Claude Code rewrites the file in place, truncating it first,
/// and another run's Claude Code may be doing so this instant; it says nothing when done, so
/// the read is tried again a few times, briefly, before the file is taken as unreadable.
struct StateText {
    std::optional<std::string> text;
    std::optional<MemberValues> values;
};

StateText read_state(const fs::path& path) {
    StateText got;
    for (int attempt = 0;; ++attempt) {
        got.text = read_whole_file(path, AT_FDCWD, max_state_bytes);
        got.values = got.text ? read_members(*got.text, claude_state_members()) : std::nullopt;
        std::error_code ec;
        if (got.values || attempt == 4 || (!fs::exists(path, ec) && !ec)) return got;
        std::this_thread::sleep_for(std::chrono::milliseconds{20 << attempt});
    }
}

/// How the Claude state file at `path` is now, with its text when it was read.
std::pair<GuardedFile, StateText> claude_state_and_text(const fs::path& path) {
    GuardedFile state;
    state.path = path;
    std::error_code ec;
    const auto own = fs::symlink_status(path, ec);
    // Absent, the common case at every run: one call.
    if (own.type() == fs::file_type::not_found) return {state, {}};
    if (fs::is_symlink(own)) {
        const auto leads_to = fs::weakly_canonical(path, ec);
        state.leads_to = ec ? std::string{} : leads_to.string();
        // A link to nothing: the tool makes a file.
        if (!fs::exists(path, ec) && !ec) return {state, {}};
    }
    // There, or not known to be absent (a folder on the way that cannot be searched): not
    // JSON, too big, not a file leave `content` empty, which no readable state has.
    state.kind = GuardedFile::Kind::file;
    state.mode = mode_of(path);
    auto text = read_state(path);
    if (text.values) state.content = members_document(*text.values, claude_state_members());
    return {std::move(state), std::move(text)};
}

}  // namespace

GuardedFile claude_state(const fs::path& path) {
    return claude_state_and_text(path).first;
}

namespace {

/// Adds the owner's rights to `folder` when they lack any: an agent may take away its write
/// permission (Landlock does not guard chmod), and a put-back needs it. Only a real folder of
/// this user's (`held`: `folder` is a held folder's `through`, a link to it by design).
void let_owner_write(const fs::path& folder, bool held = false) {
    struct stat st {};

    std::error_code ec;
    if ((held ? ::stat : ::lstat)(folder.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == ::geteuid() && (st.st_mode & S_IRWXU) != S_IRWXU)
        fs::permissions(folder, fs::perms::owner_all, fs::perm_options::add, ec);
}

/// `text` kept for a person in `changed_dir` as `changed-<folder>-<name>` of `path`, owner
/// only (settings hold keys); the note to add to a log line, empty if it could not be kept.
std::string keep_changed(const fs::path& changed_dir,
                         const fs::path& path,
                         std::string_view text,
                         std::string_view what) {
    const fs::path kept = changed_dir / fmt::format("changed-{}-{}",
                                                    path.parent_path().filename().string(),
                                                    path.filename().string());
    std::error_code ec;
    fs::create_directories(changed_dir, ec);
    if (!write_file_atomically(kept, text, Durability::synced, 0600).empty()) return {};
    return fmt::format("; {} in {}", what, kept.string());
}

/// Puts the guarded members of the Claude state file back as `was` holds them, leaving the rest
/// of the file as the tool wrote it. nullopt when nothing needed doing, else the line to log;
/// `failed` when the file could not be written.
std::optional<std::string> put_back_members(const GuardedFile& was,
                                            const fs::path& changed_dir,
                                            bool& failed) {
    const auto [now, now_text] = claude_state_and_text(was.path);
    const bool unreadable = now.kind == GuardedFile::Kind::file && now.content.empty();
    if (!unreadable && now == was) return std::nullopt;
    // Through a link only if it leads where it led when the runs began (a person's dotfiles):
    // one an agent made or turned elsewhere is replaced by a file, never written through.
    const bool follow = now.leads_to && !now.leads_to->empty() && was.leads_to == now.leads_to;
    const fs::path where = follow ? fs::path{*now.leads_to} : was.path;
    let_owner_write(where.parent_path());
    const auto wanted = read_members(was.content, claude_state_members()).value_or(MemberValues{});
    // Read again where it is written: a link may have changed since (another run's agent).
    const StateText read = follow ? read_state(where) : now_text;
    const auto& text = read.text;
    // Absent: a file of the members alone. There but not read whole (too big, a folder, no
    // permission) or not JSON: never taken as empty, which would write over it.
    const auto merged = now.kind == GuardedFile::Kind::absent
                            ? put_members("{}", wanted, claude_state_members())
                        : read.values ? put_members(*text, wanted, claude_state_members())
                                      : std::nullopt;
    // Its mode as it was (it holds the person's account: often owner only), with their own
    // reading and writing; one an agent made gets the owner's alone.
    const mode_t mode = was.kind == GuardedFile::Kind::file ? (was.mode | S_IRUSR | S_IWUSR) : 0600;
    std::string problem;
    if (!merged) {
        // The tool may not read it, or may (a file too big to check): either way it is not
        // left to be read with unknown members. Set aside whole beside itself, not lost.
        // A name of its own each time: one an agent made first cannot stop it.
        const fs::path aside = fs::path{where}.concat(
            fmt::format(".unchecked-by-board-{}-{}", ::getpid(), file_times_from_now_ns()));
        std::error_code ec;
        fs::rename(where, aside, ec);
        problem = ec ? ec.message()
                     : write_file_atomically(where,
                                             *put_members("{}", wanted, claude_state_members()),
                                             Durability::synced,
                                             mode);
        failed = failed || !problem.empty();
        return problem.empty()
                   ? fmt::format(
                         "{} could not be checked after an agent's run (it is not JSON, "
                         "or over {} MiB): set aside as {}, and replaced by a file of its "
                         "MCP servers and project approvals as they were",
                         was.path.string(),
                         max_state_bytes >> 20,
                         aside.string())
                   : fmt::format(
                         "{} could not be checked after an agent's run (it is not JSON, "
                         "or over {} MiB) and could not be set aside ({}); it is tried "
                         "again after the next run",
                         was.path.string(),
                         max_state_bytes >> 20,
                         problem);
    }
    // A link that was not there, or led elsewhere, is replaced even when the members agree.
    if (text && *merged == *text && (follow || !now.leads_to)) {
        if (was.kind != GuardedFile::Kind::file || now.mode == was.mode || now.mode == mode)
            return std::nullopt;
        // Only its mode changed (opened to others, who could add a server later).
        std::error_code ec;
        fs::permissions(where, static_cast<fs::perms>(mode), ec);
        failed = failed || static_cast<bool>(ec);
        return fmt::format("{}: its mode was changed during an agent's run: {} ({:o})",
                           was.path.string(),
                           ec ? "could not be put back, " + ec.message() : "put back",
                           static_cast<unsigned>(mode));
    }
    std::string kept_note;
    if (now.kind == GuardedFile::Kind::file)
        kept_note = keep_changed(changed_dir, was.path, now.content, "the changed members are");
    problem = write_file_atomically(where, *merged, Durability::synced, mode);
    failed = failed || !problem.empty();
    return problem.empty()
               ? fmt::format(
                     "{}: MCP servers or project approvals were changed during an "
                     "agent's run: put back (they name programs Claude Code runs, "
                     "unconfined, for whoever starts it next; the rest of the file is as "
                     "it was left){}",
                     was.path.string(),
                     kept_note)
               : fmt::format(
                     "{}: MCP servers or project approvals were changed during an "
                     "agent's run and could not be put back ({}); it is tried again "
                     "after the next run{}",
                     was.path.string(),
                     problem,
                     kept_note);
}

}  // namespace

fs::path settings_kept_file(const fs::path& board_root) {
    const auto private_dir = private_folder(board_root);
    if (!private_dir) return {};
    const fs::path guard_dir = private_dir.value() / "guard";
    std::error_code ec;
    if (fs::create_directory(guard_dir, ec)) fs::permissions(guard_dir, fs::perms::owner_all, ec);
    if (!fs::is_directory(fs::symlink_status(guard_dir, ec))) return {};
    return guard_dir / "settings-before.json";
}

SettingsGuard::SettingsGuard(std::vector<fs::path> files,
                             fs::path kept,
                             std::vector<fs::path> claude_states,
                             NamedProgramPlaces named)
    : files_(std::move(files))
    , claude_states_(std::move(claude_states))
    , named_(std::move(named))
    , kept_(std::move(kept)) {}

bool SettingsGuard::is_claude_state(const fs::path& path) const {
    return std::find(claude_states_.begin(), claude_states_.end(), path) != claude_states_.end();
}

std::optional<std::string> SettingsGuard::text_unless_hidden(const fs::path& path) const {
    const UniqueFd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};

    struct stat opened {};

    if (!file || ::fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode)) return std::nullopt;
    for (const fs::path& hidden : named_.hidden) {
        struct stat st {};

        if (::stat(hidden.c_str(), &st) == 0 && st.st_dev == opened.st_dev &&
            st.st_ino == opened.st_ino)
            return std::nullopt;
    }
    return read_whole_file(path_of_descriptor(file.get()), AT_FDCWD, max_settings_bytes);
}

bool SettingsGuard::is_settings_file(const fs::path& path) const {
    return std::find(files_.begin(), files_.end(), path) != files_.end();
}

std::string_view SettingsGuard::role_of(const GuardedFile& was,
                                        const std::vector<GuardedFile>& before) const {
    if (is_settings_file(was.path)) return "it names programs";
    if (std::any_of(before.begin(), before.end(), [&](const GuardedFile& f) {
            return f.path != was.path && path_is_within(f.path, was.path);
        }))
        return "it is on the way to what";
    if (std::any_of(before.begin(), before.end(), [&](const GuardedFile& link) {
            return link.kind == GuardedFile::Kind::link && link_leads_to(link) == was.path;
        }))
        return "a guarded link leads to it, and it holds what";
    return "its settings name it as a program";
}

SettingsGuard::Run::Run(std::shared_ptr<SettingsGuard> guard)
    : guard_(std::move(guard)) {
    guard_->begin();
}

SettingsGuard::Run::~Run() {
    guard_->end(put_back_);
}

std::vector<std::string> SettingsGuard::Run::put_back(const fs::path& changed_dir) {
    const std::lock_guard lock{guard_->mutex_};
    put_back_ = true;
    std::vector<std::string> lines;
    for (const auto& line : guard_->unchecked_) lines.push_back(line);
    for (const auto& path : guard_->unread_)
        lines.push_back(
            fmt::format("{} could not be read when the runs began (not JSON, or over "
                        "{} MiB): its MCP servers and approvals were not checked "
                        "after this run",
                        path.string(),
                        max_state_bytes >> 20));
    for (auto& line : guard_->put_back_locked(guard_->before_, changed_dir))
        lines.push_back(std::move(line));
    return lines;
}

void SettingsGuard::begin() {
    const std::lock_guard lock{mutex_};
    if (runs_++ > 0 || owed_) return;  // owed: the settings as they were are still these
    std::vector<GuardedFile> now;
    std::unordered_set<std::string> taken;
    for (const auto& path : files_) {
        auto state = guarded_state(path);
        if (!state) continue;
        // An agent may swap a folder it can write (a `CLAUDE_CONFIG_DIR` in temp) for a link
        // to a person's files: the settings are put back only where they were, and the links
        // on their way, and a file a settings link leads to, are kept too.
        for (auto& entry : with_its_way(std::move(*state), named_))
            if (taken.insert(entry.path.string()).second) now.push_back(std::move(entry));
    }
    unread_.clear();
    for (const auto& path : claude_states_) {
        auto state = claude_state(path);  // read again a few times if mid-write
        // One that cannot be read has no baseline to put back: taking it as "no members"
        // would strip a person's servers after the run. Said at every put-back instead.
        if (state.kind == GuardedFile::Kind::file && state.content.empty())
            unread_.push_back(path);
        else
            now.push_back(std::move(state));
    }
    // What a link leads to is kept on disk where agents read: never a file hidden from them
    // (the board's token), should a link to one be there when the runs begin. Read again
    // from the file opened and checked, so no link turned meanwhile can slip one in.
    for (auto& entry : now)
        if (entry.kind == GuardedFile::Kind::link) entry.link_text = text_unless_hidden(entry.path);
    auto named = take_named_programs(now, named_, [&](const fs::path& path) {
        return is_claude_state(path) || taken.contains(path.string());
    });
    unchecked_ = std::move(named.unchecked);
    for (auto& program : named.kept) now.push_back(std::move(program));
    // Runs one after another with the settings unchanged keep the one baseline already on
    // disk: no write and sync per run.
    if (held_ && on_disk_ && now == before_) return;
    before_ = std::move(now);
    held_ = true;
    // Kept on disk before the agent starts, so a daemon killed during the run leaves them to
    // the next one (recover). A write that failed is tried again by the next run.
    on_disk_ = kept_.empty() || write_file_atomically(kept_, encode(before_)).empty();
}

void SettingsGuard::end(bool put_back) {
    const std::lock_guard lock{mutex_};
    if (!put_back) owed_ = true;
    --runs_;
}

void SettingsGuard::settle() {
    const std::lock_guard lock{mutex_};
    if (runs_ > 0 || owed_ || !held_) return;
    std::error_code ec;
    // A kept file that stays would be put back over a person's later edits: held until gone.
    if (!kept_.empty() && !fs::remove(kept_, ec) && ec) return;
    before_.clear();
    held_ = false;
}

std::vector<std::string> SettingsGuard::recover(const fs::path& changed_dir) {
    const std::lock_guard lock{mutex_};
    if (kept_.empty())
        return {
            "the tools' settings are kept in memory only while runs go on (no folder "
            ".board/guard could be had): a daemon killed during a run leaves nothing to put "
            "back"};
    // An older daemon kept them one folder up (`.board/settings-before.json`).
    const fs::path older = kept_.parent_path().parent_path() / kept_.filename();
    std::error_code moved;
    if (fs::exists(fs::symlink_status(older, moved))) {
        if (fs::exists(fs::symlink_status(kept_, moved)))
            fs::remove(older, moved);
        else
            fs::rename(older, kept_, moved);
    }
    const auto text = read_whole_file(kept_, AT_FDCWD, 64u << 20);
    if (!text) return {};
    // Only the paths this daemon guards, and those the kept settings name where an agent may
    // write: the file is the daemon's, but a path is a path.
    std::vector<GuardedFile> entries = decode(*text);
    std::vector<GuardedFile> settings;
    for (const auto& f : entries)
        if (is_settings_file(f.path) || is_claude_state(f.path)) settings.push_back(f);
    const auto may_be_named = named_or_on_the_way(settings, named_);
    // Named, or a guarded path, or the file a kept link leads to (as the kept link says, not
    // as the disk the dead run's agent last shaped says); then the links on the way to those.
    std::vector<bool> believed(entries.size());
    std::vector<const GuardedFile*> links_believed;
    const auto may_lie_here = [&](const GuardedFile& f) {
        return f.leads_to && lies_where_agents_write(*f.leads_to, named_);
    };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const GuardedFile& f = entries[i];
        const bool led_to =
            std::any_of(links_believed.begin(), links_believed.end(), [&](const GuardedFile* link) {
                return link_leads_to(*link) == f.path;
            });
        believed[i] = is_settings_file(f.path) || is_claude_state(f.path) ||
                      (may_lie_here(f) && (led_to || may_be_named.contains(f.path.string())));
        if (believed[i] && f.kind == GuardedFile::Kind::link) links_believed.push_back(&f);
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (believed[i] || entries[i].kind != GuardedFile::Kind::link || !may_lie_here(entries[i]))
            continue;
        for (std::size_t j = 0; j < entries.size() && !believed[i]; ++j)
            believed[i] = believed[j] && j != i && path_is_within(entries[j].path, entries[i].path);
    }
    std::vector<GuardedFile> before;  // in the kept order
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (believed[i]) before.push_back(std::move(entries[i]));
    auto lines = put_back_locked(before, changed_dir);
    if (owed_) {
        before_ = std::move(before);  // still not put back: the next run's end tries again
        held_ = true;
        return lines;
    }
    std::error_code ec;
    fs::remove(kept_, ec);
    return lines;
}

std::vector<std::string> SettingsGuard::put_back_locked(const std::vector<GuardedFile>& before,
                                                        const fs::path& changed_dir) {
    std::vector<std::string> lines;
    bool failed = false;
    for (std::size_t i = 0; i < before.size(); ++i) {
        const GuardedFile& was = before[i];
        if (is_claude_state(was.path)) {
            if (auto line = put_back_members(was, changed_dir, failed))
                lines.push_back(std::move(*line));
            continue;
        }
        const bool settings = is_settings_file(was.path);

        // Absent it was, and absent it is as the tool looks for it: nothing to walk to (the
        // common case, at every run's end, for the tools a person does not use).
        struct stat seen {};

        if (was.kind == GuardedFile::Kind::absent && ::lstat(was.path.c_str(), &seen) != 0 &&
            (errno == ENOENT || errno == ENOTDIR))
            continue;
        // Read and written through the folder it was in, held (not a settings file an older
        // daemon kept: it has no folder).
        fs::path where = was.path;
        HeldFolder held;
        if (!settings || was.leads_to) {
            const auto kept_link = [&](const fs::path& path) {
                return std::any_of(before.begin(), before.end(), [&](const GuardedFile& f) {
                    return f.kind == GuardedFile::Kind::link && f.path == path;
                });
            };
            FolderCheck folder = put_folder_back(was, named_, kept_link);
            if (folder.outcome == FolderCheck::Outcome::gone) {  // absent, as it was
                if (!folder.line.empty()) lines.push_back(std::move(folder.line));
                continue;
            }
            if (folder.outcome != FolderCheck::Outcome::held) {
                lines.push_back(std::move(folder.line));
                // The baseline is held, and the next put-back tries again; a person's change
                // is taken when runs next begin.
                failed = failed || folder.outcome == FolderCheck::Outcome::refused;
                continue;
            }
            held = std::move(folder.folder);
            where = held.through / was.path.filename();
        }
        auto now = guarded_state(where);
        std::optional<std::string> changed_text;
        if (now) {
            // A link's own text only: what it leads to may be a file no agent may read (the
            // board's token), and what is kept here is within their reach.
            if (now->kind == GuardedFile::Kind::file)
                changed_text = now->content;
            else if (now->kind == GuardedFile::Kind::link)
                changed_text = "a link to " + now->content + "\n";
            as_taken(*now, was);
        }
        if (now && *now == was) continue;
        std::error_code ec;
        std::string kept_note;
        if (changed_text)
            kept_note = keep_changed(changed_dir, was.path, *changed_text, "the changed text is");
        let_owner_write(held.fd ? held.through : was.path.parent_path(), bool{held.fd});
        // Whatever is there now goes, unless a rename can replace it (a file or a link by
        // a file); a folder never can. A link is put back as the link it is, never written
        // through: a file it leads to that an agent may write is kept on its own.
        const auto status = fs::symlink_status(where, ec);
        if (was.kind != GuardedFile::Kind::file || fs::is_directory(status))
            fs::remove_all(where, ec);
        std::string problem;
        if (was.kind == GuardedFile::Kind::file) {
            problem = write_file_atomically(where, was.content, Durability::synced, was.mode);
        } else if (was.kind == GuardedFile::Kind::link) {
            fs::create_symlink(was.content, where, ec);
            if (ec) problem = ec.message();
        } else if (ec) {
            problem = ec.message();
        }
        failed = failed || !problem.empty();
        lines.push_back(
            problem.empty()
                ? fmt::format("{} was changed during an agent's run: put back ({} the tool "
                              "runs, unconfined, for whoever starts it next){}",
                              was.path.string(),
                              role_of(was, before),
                              kept_note)
                : fmt::format("{} was changed during an agent's run and could not be put back "
                              "({}); it is tried again after the next run{}",
                              was.path.string(),
                              problem,
                              kept_note));
    }
    owed_ = failed;
    return lines;
}

}  // namespace board::orchestrator
