#include "orchestrator/output_capture.hpp"

namespace board::orchestrator {

OutputCapture::OutputCapture(std::shared_ptr<OutputReader> reader, std::size_t max_line_bytes)
    : reader_(reader ? std::move(reader) : make_output_reader(DialectKind::generic, {}))
    , max_line_bytes_(max_line_bytes) {}

void OutputCapture::feed(std::string_view bytes) {
    bytes_ += bytes.size();
    while (!bytes.empty()) {
        const auto nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
            pending_.append(bytes);
            if (pending_.size() >= max_line_bytes_) {
                reader_->line(pending_);
                pending_.clear();
            }
            return;
        }
        if (pending_.empty()) {
            reader_->line(bytes.substr(0, nl));
        } else {
            pending_.append(bytes.substr(0, nl));
            reader_->line(pending_);
            pending_.clear();
        }
        bytes.remove_prefix(nl + 1);
    }
}

CapturedOutput OutputCapture::finish(int exit_code) {
    if (!pending_.empty()) {
        reader_->line(pending_);
        pending_.clear();
    }
    return CapturedOutput{reader_->finish(exit_code), bytes_};
}

}  // namespace board::orchestrator
