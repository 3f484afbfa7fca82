// test_cpp.cpp - hwtimer.h compiles as C++ (C++11, every warning the project uses) and
// works there: the implementation is built by the C++ compiler, under extern "C".
#define HWTIMER_IMPLEMENTATION
#include "../hwtimer.h"

#include <cstdio>

namespace {

struct fake_clock {
    uint64_t now;
};

uint64_t read_fake_clock(void *ctx) {
    return static_cast<fake_clock *>(ctx)->now;
}

struct counter {
    hwtimer_timeout to; // embedded, as in C
    int runs;
};

extern "C" void count_run(hwtimer_timeout *to, void *arg) {
    counter *c = static_cast<counter *>(arg);
    if (&c->to == to) {
        c->runs++;
    }
}

int failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "test_cpp: failed: %s\n", what);
        failures++;
    }
}

} // namespace

int main() {
    const uint64_t ms = 1000000;
    fake_clock clock = {0};
    hwtimer_config cfg;
    hwtimer_config_default(&cfg);
    cfg.tick_ns = ms;
    cfg.clock_fn = read_fake_clock;
    cfg.clock_ctx = &clock;

    hwtimer *t = nullptr;
    expect(hwtimer_create(&t, &cfg) == HWTIMER_OK && t != nullptr, "create");
    if (t == nullptr) {
        return 1;
    }
    counter c = {HWTIMER_TIMEOUT_INIT, 0};
    expect(hwtimer_timeout_state(&c.to) == HWTIMER_IDLE, "idle");
    expect(hwtimer_schedule(t, &c.to, 3 * ms, count_run, &c) == HWTIMER_OK, "schedule");
    expect(hwtimer_pending(t) == 1, "pending");
    clock.now = 2 * ms;
    expect(hwtimer_advance(t, clock.now) == 0, "not early");
    clock.now = 3 * ms;
    expect(hwtimer_advance(t, clock.now) == 1, "fires at its boundary");
    expect(c.runs == 1, "callback ran once");
    expect(hwtimer_timeout_state(&c.to) == HWTIMER_EXPIRED, "expired");
    expect(hwtimer_stop(t, nullptr, nullptr) == 0, "stop");
    hwtimer_destroy(t);
    std::printf("%s\n", failures == 0 ? "1 passed, 0 failed" : "0 passed, 1 failed");
    return failures == 0 ? 0 : 1;
}
