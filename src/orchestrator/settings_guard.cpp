#include "orchestrator/settings_guard.hpp"

#include "support/files.hpp"

#include <boost/json.hpp>
#include <fmt/format.h>

#include <system_error>

namespace board::orchestrator {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr std::size_t max_settings_bytes = 1u << 20;

std::string_view kind_name(GuardedFile::Kind kind) {
    return kind == GuardedFile::Kind::file   ? "file"
           : kind == GuardedFile::Kind::link ? "link"
                                             : "absent";
}

std::string encode(const std::vector<GuardedFile>& files) {
    json::array out;
    for (const auto& f : files)
        out.push_back(json::object{
            {"path", f.path.string()}, {"kind", kind_name(f.kind)}, {"content", f.content}});
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
        const std::string_view k = kind && kind->is_string() ? kind->get_string() : "";
        f.kind = k == "file"   ? GuardedFile::Kind::file
                 : k == "link" ? GuardedFile::Kind::link
                               : GuardedFile::Kind::absent;
        if (const auto* c = o->if_contains("content"); c && c->is_string())
            f.content = std::string{c->get_string()};
        files.push_back(std::move(f));
    }
    return files;
}

}  // namespace

std::optional<GuardedFile> guarded_state(const fs::path& path) {
    GuardedFile state{path, GuardedFile::Kind::absent, {}};
    std::error_code ec;
    const auto status = fs::symlink_status(path, ec);
    if (ec || !fs::exists(status)) return state;
    if (fs::is_symlink(status)) {
        state.kind = GuardedFile::Kind::link;
        state.content = fs::read_symlink(path, ec).string();
        if (ec) return std::nullopt;
        return state;
    }
    auto text = read_whole_file(path, AT_FDCWD, max_settings_bytes);
    if (!text) return std::nullopt;  // a folder, a device, too big: nothing to put back
    state.kind = GuardedFile::Kind::file;
    state.content = std::move(*text);
    return state;
}

SettingsGuard::SettingsGuard(std::vector<fs::path> files, fs::path kept)
    : files_(std::move(files))
    , kept_(std::move(kept)) {}

SettingsGuard::Run::Run(std::shared_ptr<SettingsGuard> guard)
    : guard_(std::move(guard)) {
    guard_->begin();
}

SettingsGuard::Run::~Run() {
    guard_->end();
}

void SettingsGuard::begin() {
    const std::lock_guard lock{mutex_};
    if (runs_++ > 0) return;
    before_.clear();
    for (const auto& path : files_)
        if (auto state = guarded_state(path)) before_.push_back(std::move(*state));
    // Kept on disk before the agent starts, so a daemon killed during the run leaves them to
    // the next one (recover).
    write_file_atomically(kept_, encode(before_));
}

void SettingsGuard::end() {
    const std::lock_guard lock{mutex_};
    if (--runs_ > 0) return;
    before_.clear();
    std::error_code ec;
    fs::remove(kept_, ec);
}

std::vector<std::string> SettingsGuard::put_back(const fs::path& changed_dir) {
    const std::lock_guard lock{mutex_};
    return put_back_locked(before_, changed_dir);
}

std::vector<std::string> SettingsGuard::recover(const fs::path& changed_dir) {
    const std::lock_guard lock{mutex_};
    const auto text = read_whole_file(kept_, AT_FDCWD, 64u << 20);
    if (!text) return {};
    auto lines = put_back_locked(decode(*text), changed_dir);
    std::error_code ec;
    fs::remove(kept_, ec);
    return lines;
}

std::vector<std::string> SettingsGuard::put_back_locked(const std::vector<GuardedFile>& before,
                                                        const fs::path& changed_dir) {
    std::vector<std::string> lines;
    for (const auto& was : before) {
        const auto now = guarded_state(was.path);
        if (now && *now == was) continue;
        std::error_code ec;
        std::string kept_note;
        if (now && now->kind == GuardedFile::Kind::file) {
            const fs::path kept = changed_dir / ("changed-" + was.path.filename().string());
            fs::create_directories(changed_dir, ec);
            if (write_file_atomically(kept, now->content).empty())
                kept_note = "; the changed text is in " + kept.string();
        }
        // Whatever is there now goes, unless a rename can replace it (a file or a link by
        // a file); a folder never can.
        const auto status = fs::symlink_status(was.path, ec);
        if (was.kind != GuardedFile::Kind::file || fs::is_directory(status))
            fs::remove_all(was.path, ec);
        std::string problem;
        if (was.kind == GuardedFile::Kind::file) {
            problem = write_file_atomically(was.path, was.content);
        } else if (was.kind == GuardedFile::Kind::link) {
            fs::create_symlink(was.content, was.path, ec);
            if (ec) problem = ec.message();
        } else if (ec) {
            problem = ec.message();
        }
        lines.push_back(
            problem.empty()
                ? fmt::format("{} was changed during an agent's run: put back (it names "
                              "programs the tool runs, unconfined, for whoever starts it next){}",
                              was.path.string(),
                              kept_note)
                : fmt::format("{} was changed during an agent's run and could not be put back: "
                              "{}",
                              was.path.string(),
                              problem));
    }
    return lines;
}

}  // namespace board::orchestrator
