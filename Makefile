# onnxprobe front door: `make demo`, `make test`, `make bench`.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
PY ?= /usr/bin/python3
BIN := $(BUILD)/onnxprobe

.PHONY: all deps configure build demo test test-unit test-cli test-python test-conformance bench wheel \
        format format-check tidy test-sanitize fuzz clean

all: build

deps:
	@bash scripts/bootstrap.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# the demo needs the library and the CLI only, not the test and benchmark targets
demo: configure
	cmake --build $(BUILD) -j$(JOBS) --target onnxprobe
	@bash scripts/demo.sh $(BIN)

# after the suites, one line per ONNX Runtime and conformance suite: "ONNX Runtime X: N/M ..."
test: build
	@rm -f $(BUILD)/tests/conformance_summary*.txt
	cd $(BUILD) && rc=0 && ctest --output-on-failure -j$(JOBS) || rc=$$?; \
	  cat tests/conformance_summary*.txt 2>/dev/null; exit $$rc

# one group of suites (ctest labels): C++ unit tests, the command line, every pytest suite, the
# ONNX backend conformance suites
test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L '^unit$$'
test-cli: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L '^cli$$'
test-python: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) -L '^python$$'
test-conformance: build
	@rm -f $(BUILD)/tests/conformance_summary*.txt
	cd $(BUILD) && rc=0 && ctest --output-on-failure -j$(JOBS) -L '^conformance$$' || rc=$$?; \
	  cat tests/conformance_summary*.txt 2>/dev/null; exit $$rc

bench: build
	@bash bench/run.sh $(BUILD)

# a manylinux wheel in dist/ (docs: README, "Install"); needs `make build`'s compiler only
wheel: deps
	@bash scripts/wheel.sh dist

test-sanitize: deps
	$(MAKE) BUILD=build-asan CMAKE_FLAGS="-DONNXPROBE_SANITIZE=ON -DONNXPROBE_BUILD_BENCH=OFF" test

fuzz: deps
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash scripts/fuzz.sh

SOURCES = git ls-files --cached --others --exclude-standard '*.h' '*.cc'

format: deps
	$(SOURCES) | xargs clang-format -i

format-check: deps
	$(SOURCES) | xargs clang-format --dry-run -Werror

tidy: build
	find src tools -name '*.cc' | xargs clang-tidy -p $(BUILD) --quiet

clean:
	rm -rf $(BUILD) build-asan
