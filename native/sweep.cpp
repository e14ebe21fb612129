// sweep.cpp — grid expansion, the per-point loop and the CSV rows (see sweep.h).
#include "sweep.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <string_view>
#include <exception>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/step/columns.h"
#include "core/step/estimate.h"
#include "core/scenario/scenario.h"
#include "core/data/tables.h"
#include "output.h"
#include "parallel.h"
#include "values.h"
#include "core/serving/engine.h"
#include "core/serving/serving.h"

namespace cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// About 20 minutes at a million points a second; checked as each axis is read, before the next one is expanded.
constexpr double kMaxPoints = 1e9;

struct Axis {
    std::string path;
    const moe::FieldDesc* field = nullptr;  // null for model/hardware
    bool numeric = false;                   // set with set_path_number; else set_path with `values`
    std::vector<std::string> cells;         // CSV cell per value (escaped)
    std::vector<double> numbers;
    std::vector<json> values;
    std::size_t size() const { return cells.size(); }
};

std::string csv_cell(std::string_view text) {
    std::string out;
    moe::append_csv_cell(out, text);
    return out;
}

// Parses one --axis and checks every value against the field on a scratch scenario, so a typo fails the whole
// command up front instead of filling a file with error rows. Cross-field problems (ep not dividing the experts
// at this point) are left to the points.
Axis parse_axis(const std::string& spec, const moe::Scenario& base, const moe::Catalog& catalog) {
    Axis axis;
    std::string text;
    check_length(spec, "--axis");
    if (!split_assignment(spec, axis.path, text))
        throw UsageError("--axis '" + shown(spec) + "': expected PATH=VALUES, e.g. --axis workload.batch=1:256:x2");
    axis.field = require_field(axis.path, "--axis");
    axis.numeric = axis.field && is_numeric_field(*axis.field);
    // A list of request lengths sets the step's shape: the fields it replaces would sweep nothing.
    if (const char* list = moe::length_list_replacing(base.workload, axis.path)) {
        const bool by_prompts = std::string_view(list) == "workload.prompt_lens";
        throw UsageError("--axis " + axis.path + ": the scenario's " + list +
                         (by_prompts ? " set the prefill forward's prompts" : " set the decode batch (their count) and its contexts") +
                         ", so this field changes nothing; drop the list to sweep it");
    }
    std::vector<AxisValue> values;
    std::string error;
    if (!parse_values(text, axis.numeric, values, error)) throw UsageError("--axis " + axis.path + ": " + error);

    moe::Scenario scratch = base;
    moe::Issues issues;
    for (const AxisValue& v : values) {
        if (axis.numeric) {
            if (!moe::set_path_number(scratch, *axis.field, v.number, issues))
                throw UsageError(issue_lines(issues, "--axis " + axis.path + "=" + shown(v.text) + ": "));
            axis.numbers.push_back(v.number);
        } else {
            json value = field_value(axis.field, axis.path, v.text, "", catalog, "--axis");
            if (!moe::set_path(scratch, axis.path, value, catalog, issues))
                throw UsageError(issue_lines(issues, "--axis " + axis.path + "=" + shown(v.text) + ": "));
            axis.values.push_back(std::move(value));
        }
        axis.cells.push_back(csv_cell(v.text));
    }
    return axis;
}

std::vector<const moe::Column*> select_columns(const std::string& list) {
    std::vector<const moe::Column*> columns;
    if (list.empty()) {
        for (const moe::Column& c : moe::output_columns()) columns.push_back(&c);
        return columns;
    }
    std::vector<AxisValue> names;
    std::string error;
    if (!parse_values(list, false, names, error)) throw UsageError("--columns: " + error);
    for (const AxisValue& n : names) {
        const moe::Column* c = moe::find_column(n.text);
        if (!c) throw UsageError("--columns: unknown column '" + shown(n.text) + "' (moe-roofline presets columns lists them)");
        for (const moe::Column* seen : columns)
            if (seen == c) throw UsageError("--columns: " + shown(n.text) + " given twice");
        columns.push_back(c);
    }
    // An invalid point must never be silent: status and error always end the row.
    for (const char* name : {"status", "error"}) {
        bool present = false;
        for (const moe::Column* c : columns) present = present || std::string_view(c->name) == name;
        if (!present) columns.push_back(moe::find_column(name));
    }
    return columns;
}

// "sweep: 41% 412000/1000000 points, 123456 points/s, 5 s left" on stderr once the sweep has run a second:
// redrawn in place on a terminal, one line per 10% otherwise.
class Progress {
public:
    Progress(std::uint64_t total, bool enabled)
        : total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1), start_(Clock::now()) {
        // Tests shorten the one-second delay instead of running long sweeps.
        if (const char* delay = std::getenv("MOE_ROOFLINE_PROGRESS_DELAY")) delay_ = std::atof(delay);
    }

    void update(std::uint64_t done) {
        if (!enabled_) return;
        const Clock::time_point now = Clock::now();
        const double elapsed = seconds(now);
        if (elapsed < delay_) return;
        if (tty_) {
            if (shown_ && now - last_draw_ < std::chrono::milliseconds(200)) return;
            last_draw_ = now;
            std::fprintf(stderr, "\r%s\x1b[K", line(done, elapsed).c_str());
        } else {
            const int decile = int(10 * done / total_);
            if (shown_ && decile <= last_decile_) return;
            last_decile_ = decile;
            std::fprintf(stderr, "%s\n", line(done, elapsed).c_str());
        }
        shown_ = true;
    }

    void finish(std::uint64_t done, const std::string& where) {
        if (!enabled_ || !shown_) return;
        const double elapsed = seconds(Clock::now());
        char buf[200];
        std::snprintf(buf, sizeof buf, "sweep: %llu points in %.1f s (%.0f points/s) -> %s",
                      static_cast<unsigned long long>(done), elapsed, double(done) / elapsed, where.c_str());
        if (tty_) std::fprintf(stderr, "\r%s\x1b[K\n", buf);
        else std::fprintf(stderr, "%s\n", buf);
    }

    // Leaves the terminal on a fresh line when the sweep stops early.
    void abandon() {
        if (enabled_ && shown_ && tty_) std::fputc('\n', stderr);
    }

private:
    double seconds(Clock::time_point now) const { return std::chrono::duration<double>(now - start_).count(); }

    std::string line(std::uint64_t done, double elapsed) const {
        const double rate = double(done) / elapsed;
        const double left = rate > 0 ? double(total_ - done) / rate : 0;
        char buf[200];
        std::snprintf(buf, sizeof buf, "sweep: %3.0f%% %llu/%llu points, %.0f points/s, %.0f s left",
                      100.0 * double(done) / double(total_), static_cast<unsigned long long>(done),
                      static_cast<unsigned long long>(total_), rate, std::ceil(left));
        return buf;
    }

    std::uint64_t total_;
    bool enabled_, tty_;
    Clock::time_point start_, last_draw_{};
    double delay_ = 1.0;  // seconds before the first line
    bool shown_ = false;
    int last_decile_ = 0;
};

// Formats rows into a string. One per thread: it keeps, per output column, the last number and its text, since
// across neighbouring points most columns repeat (weights, capacity, parameters, often a whole phase): the
// repeated text is copied instead of formatted again. Byte-identical to formatting every cell. Each column's kind
// (number, boolean, status, error, other text) is resolved once, and numbers are written straight into fixed
// buffers (write_number), without a std::string per cell.
class RowWriter {
public:
    explicit RowWriter(const std::vector<const moe::Column*>& columns) : columns_(columns), cells_(columns.size()) {
        const auto status = moe::find_column("status")->text, error = moe::find_column("error")->text;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const moe::Column* c = columns[i];
            Cell& cell = cells_[i];
            cell.number = c->number;
            if (c->type == moe::ColumnType::text)
                cell.kind = c->text == status ? Kind::status : c->text == error ? Kind::error : Kind::text;
            else
                cell.kind = c->type == moe::ColumnType::boolean ? Kind::boolean : Kind::number;
        }
    }

    static void header(const std::vector<Axis>& axes, const std::vector<const moe::Column*>& columns, std::string& buf) {
        bool first = true;
        for (const Axis& a : axes) {
            if (!first) buf += ',';
            first = false;
            moe::append_csv_cell(buf, a.path);
        }
        for (const moe::Column* c : columns) {
            if (!first) buf += ',';
            first = false;
            buf += c->name;
        }
        buf += '\n';
    }

    // `numbers`: false for a point whose axis value could not be set (no estimate ran): number cells stay empty.
    // The row is assembled in a fixed buffer (Line) and appended to `buf` once; the same bytes.
    void row(const std::vector<Axis>& axes, const std::vector<std::size_t>& index, const moe::Estimate& e,
             std::string& buf, bool numbers = true) {
        Line line(buf);
        bool first = true;
        for (std::size_t a = 0; a < axes.size(); ++a) {
            if (!first) line.put(',');
            first = false;
            line.put(axes[a].cells[index[a]]);
        }
        for (std::size_t i = 0; i < cells_.size(); ++i) {
            Cell& cell = cells_[i];
            if (!first) line.put(',');
            first = false;
            switch (cell.kind) {
                case Kind::status:
                    if (e.ok) {
                        line.put(std::string_view("ok"));  // the common case, without a std::string
                        continue;
                    }
                    break;
                case Kind::error:
                    if (e.errors.empty()) continue;  // empty cell
                    break;
                case Kind::text: break;
                case Kind::number:
                case Kind::boolean: {
                    if (!numbers) continue;
                    // moe::format_value's text, without its std::string and snprintf (tests/cli/values_test.cpp)
                    const double v = cell.number(e);
                    std::uint64_t bits;
                    std::memcpy(&bits, &v, sizeof bits);
                    if (bits != cell.bits) {
                        cell.bits = bits;
                        char* end = cell.text;
                        if (cell.kind == Kind::boolean) {
                            if (std::isfinite(v)) {
                                const char* word = v != 0 ? "true" : "false";
                                const std::size_t n = std::strlen(word);
                                std::memcpy(end, word, n);
                                end += n;
                            }
                        } else {
                            end = write_number(end, v);
                        }
                        cell.len = std::uint8_t(end - cell.text);
                    }
                    line.put_cell(cell.text, cell.len);
                    continue;
                }
            }
            std::string text;
            moe::append_csv_cell(text, columns_[i]->text(e));
            line.put(text);
        }
        line.put('\n');
    }

private:
    enum class Kind : std::uint8_t { number, boolean, status, error, text };
    static constexpr std::uint64_t kNoValue = 0x7ff4dead0000beefull;  // a signalling NaN no column returns
    struct Cell {
        std::uint64_t bits = kNoValue;  // the number `text` shows
        double (*number)(const moe::Estimate&) = nullptr;
        Kind kind = Kind::number;
        std::uint8_t len = 0;
        char text[kNumberChars];
    };

    // Characters gathered in a stack buffer and appended to `out` in large pieces (when full, and at the end).
    class Line {
    public:
        explicit Line(std::string& out) : out_(out) {}
        ~Line() { flush(); }
        void put(char ch) {
            if (n_ == sizeof buf_) flush();
            buf_[n_++] = ch;
        }
        void put(std::string_view text) {
            if (text.size() > sizeof buf_ - n_) {
                flush();
                if (text.size() > sizeof buf_) {
                    out_.append(text.data(), text.size());
                    return;
                }
            }
            std::memcpy(buf_ + n_, text.data(), text.size());
            n_ += text.size();
        }
        // A cell's text of `len` <= kNumberChars characters, copied as a fixed-size block (one or two moves).
        void put_cell(const char (&text)[kNumberChars], std::size_t len) {
            if (sizeof buf_ - n_ < kNumberChars) flush();
            std::memcpy(buf_ + n_, text, kNumberChars);
            n_ += len;
        }
        void flush() {
            out_.append(buf_, n_);
            n_ = 0;
        }

    private:
        std::string& out_;
        char buf_[2048];
        std::size_t n_ = 0;
    };

    const std::vector<const moe::Column*>& columns_;
    std::vector<Cell> cells_;
};

// Points per work item: big enough that threads rarely meet, small enough to keep every core busy to the end.
constexpr std::uint64_t kChunkPoints = 2048;

// What one thread needs to compute a run of points: its own scenario (updated in place), odometer and formatter.
struct Worker {
    Worker(const moe::Scenario& base, const std::vector<Axis>& grid, const std::vector<const moe::Column*>& columns,
           const moe::Catalog& presets)
        : s(base), axes(grid), catalog(presets), index(grid.size(), 0), axis_error(grid.size()), writer(columns) {}

    // Rows of points [begin, end) (global point numbers, the last axis fastest) appended to `buf`.
    void rows(std::uint64_t begin, std::uint64_t end, const moe::Tables& tables, std::string& buf) {
        // Decode `begin` into the odometer; every axis is set for the first point of the run.
        std::uint64_t rest = begin;
        for (std::size_t a = axes.size(); a-- > 0;) {
            index[a] = std::size_t(rest % axes[a].size());
            rest /= axes[a].size();
        }
        std::size_t first_changed = 0;
        for (std::uint64_t p = begin; p < end; ++p) {
            for (std::size_t a = first_changed; a < axes.size(); ++a) {
                const Axis& axis = axes[a];
                issues.clear();
                const bool ok = axis.numeric ? moe::set_path_number(s, *axis.field, axis.numbers[index[a]], issues)
                                             : moe::set_path(s, axis.path, axis.values[index[a]], catalog, issues);
                axis_error[a] = ok ? std::string() : join_issues(issues);
            }
            issues.clear();
            for (const std::string& err : axis_error)
                if (!err.empty()) issues.push_back({"", err});
            if (issues.empty()) {
                // estimate() validates the point first; an invalid one comes back with ok = false and its errors.
                // One Estimate per worker, reused (its vectors keep their capacity); the CSV shows no warnings.
                moe::evaluate_into(s, tables, estimate, /*warnings=*/false);
                writer.row(axes, index, estimate, buf);
            } else {
                failed.errors = issues;
                writer.row(axes, index, failed, buf, /*numbers=*/false);
            }
            // Advance the odometer: the last axis fastest.
            std::size_t a = axes.size();
            while (a > 0) {
                --a;
                if (++index[a] < axes[a].size()) break;
                index[a] = 0;
            }
            first_changed = a;
        }
    }

    moe::Scenario s;
    const std::vector<Axis>& axes;
    const moe::Catalog& catalog;
    std::vector<std::size_t> index;
    std::vector<std::string> axis_error;  // set_path's complaint about the axis's current value
    moe::Issues issues;
    moe::Estimate estimate;               // the current point's
    moe::Estimate failed;                 // for points whose axis value could not be set
    RowWriter writer;
};

// Chunks computed on `threads` worker threads, written by this thread in order. At most `window` chunks are in
// flight, so memory stays bounded whatever the grid.
void run_threaded(std::uint64_t begin, std::uint64_t end, int threads, const moe::Scenario& base,
                  const std::vector<Axis>& axes, const std::vector<const moe::Column*>& columns,
                  const moe::Catalog& catalog, const moe::Tables& tables, OutputFile& out, Progress& progress) {
    const std::uint64_t chunks = (end - begin + kChunkPoints - 1) / kChunkPoints;
    const std::uint64_t window = std::uint64_t(threads) * 4;
    std::vector<std::string> slot(window);
    std::vector<std::uint64_t> slot_chunk(window, UINT64_MAX);  // which chunk a slot holds (UINT64_MAX: none)
    std::mutex m;
    std::condition_variable cv;
    std::uint64_t next = 0, written = 0;
    bool stop = false;
    std::exception_ptr error;

    const moe::EngineSet* engines = moe::engines_in_use();  // the caller's calibration (per thread): the workers' too
    auto work = [&] {
        moe::use_engines(engines);
        Worker w(base, axes, columns, catalog);
        std::string buf;
        for (;;) {
            std::uint64_t c;
            {
                std::unique_lock<std::mutex> lock(m);
                cv.wait(lock, [&] { return stop || next >= chunks || next < written + window; });
                if (stop || next >= chunks) return;
                c = next++;
            }
            buf.clear();
            try {
                const std::uint64_t b = begin + c * kChunkPoints;
                w.rows(b, std::min(end, b + kChunkPoints), tables, buf);
            } catch (...) {
                std::lock_guard<std::mutex> lock(m);
                if (!error) error = std::current_exception();
                stop = true;
                cv.notify_all();
                return;
            }
            std::lock_guard<std::mutex> lock(m);
            slot[c % window].swap(buf);
            slot_chunk[c % window] = c;
            cv.notify_all();
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    auto finish = [&] {
        {
            std::lock_guard<std::mutex> lock(m);
            stop = true;
        }
        cv.notify_all();
        for (std::thread& t : pool) t.join();
    };
    try {
        std::string chunk;
        while (written < chunks) {
            {
                std::unique_lock<std::mutex> lock(m);
                const std::uint64_t s = written % window;
                // the predicate and the loop stop on the same conditions: once interrupted, the wait returns at
                // once, and looping on it would hold the lock the workers need (a livelock, found by cli_interrupt)
                while (!stop && slot_chunk[s] != written && !interrupted())
                    cv.wait_for(lock, std::chrono::milliseconds(100),
                                [&] { return stop || slot_chunk[s] == written || interrupted(); });
                if (interrupted()) throw Interrupted();
                if (stop && error) break;
                chunk.swap(slot[s]);
                slot_chunk[s] = UINT64_MAX;
                ++written;
            }
            cv.notify_all();
            out.buffer() += chunk;
            out.maybe_flush();
            progress.update(std::min(end - begin, written * kChunkPoints));
        }
    } catch (...) {
        finish();
        throw;
    }
    finish();
    if (error) std::rethrow_exception(error);
}

}  // namespace

int run_sweep(const ScenarioSource& base_src, const moe::Catalog& catalog, const SweepOptions& options) {
    if (options.axes.empty()) throw UsageError("sweep: give at least one --axis PATH=VALUES");
    const moe::Scenario base = build_scenario(base_src, catalog, /*allow_cross_field=*/true);

    std::vector<Axis> axes;
    double points = 1;
    for (const std::string& spec : options.axes) {
        axes.push_back(parse_axis(spec, base, catalog));
        for (std::size_t i = 0; i + 1 < axes.size(); ++i)
            if (axes[i].path == axes.back().path) throw UsageError("--axis " + axes.back().path + ": given twice");
        points *= double(axes.back().size());
        if (points > kMaxPoints) {
            std::string sizes;
            for (const Axis& a : axes) sizes += (sizes.empty() ? "" : " x ") + a.path + " " + std::to_string(a.size());
            throw UsageError("sweep: the grid has " + number_text(points) + " points (" + sizes +
                             (axes.size() < options.axes.size() ? " x ..." : "") + "); the limit is 1e9");
        }
    }
    const std::uint64_t total = static_cast<std::uint64_t>(points);
    const std::vector<const moe::Column*> columns = select_columns(options.columns);
    const moe::Tables& tables = moe::builtin_tables();  // loaded here, before any thread needs it
    const auto [begin, end] = options.shard.range(total);
    const int threads = resolve_threads(options.threads);

    OutputFile out(options.output);  // opened before any work: an unwritable path fails at once
    if (options.shard.first()) RowWriter::header(axes, columns, out.buffer());  // shards 2..N: rows only
    Progress progress(end - begin, options.progress);
    try {
        if (threads <= 1 || end - begin <= kChunkPoints) {
            Worker w(base, axes, columns, catalog);
            for (std::uint64_t b = begin; b < end; b += kChunkPoints) {
                if (interrupted()) throw Interrupted();
                w.rows(b, std::min(end, b + kChunkPoints), tables, out.buffer());
                out.maybe_flush();
                progress.update(std::min(end, b + kChunkPoints) - begin);
            }
        } else {
            run_threaded(begin, end, threads, base, axes, columns, catalog, tables, out, progress);
        }
        out.commit();
    } catch (...) {
        progress.abandon();
        throw;
    }
    progress.finish(end - begin, out.is_stdout() ? "standard output" : out.path());
    return 0;
}

}  // namespace cli
