"""``make peer-sdk``: the OpenTelemetry SDK's own trace tests, from the sdist of the version
pinned in ``constraints.txt`` (downloaded from PyPI into ``build/peer-sdk``, never kept in this
repository), run twice — plain, and with the guard installed on every ``TracerProvider`` they
create (``groundplane_everywhere.py``: observe mode, every span the tests name matched) — and
compared per test id (``keep_sdk_classes.py``, in both runs, undoes a test's reload of the
SDK module). Any difference not listed in ``allowlist.toml`` (each with its reason),
or a listed one that no longer happens, fails the run; so does a guarded run in which no
provider was guarded or no output checked, or one with an internal error.

Run from the repository root: ``python tests/peer_sdk/run.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = ROOT / "build" / "peer-sdk"
SDK, TEST_UTILS = "opentelemetry-sdk", "opentelemetry-test-utils"
SUITE = "tests/trace"

sys.path.insert(0, str(HERE))
from compare import differences, judge, load_allowlist, outcomes  # noqa: E402


def pin(package: str) -> str:
    """The version ``constraints.txt`` pins ``package`` to."""
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        name, _, pinned = line.partition("==")
        if name.strip().lower() == package:
            return pinned.strip()
    raise SystemExit(f"peer-sdk: constraints.txt pins no {package}")


def sources(package: str) -> Path:
    """``package``'s sdist (at its pin) unpacked under ``build/peer-sdk``, downloaded once."""
    pinned = pin(package)
    folder = BUILD / f"{package.replace('-', '_')}-{pinned}"
    if folder.is_dir():
        return folder
    BUILD.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "-c", str(ROOT / "constraints.txt"), "-d", str(BUILD), f"{package}=={pinned}"],
        check=True,
    )  # fmt: skip
    (archive,) = BUILD.glob(f"{package.replace('-', '_')}-{pinned}.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(BUILD, filter="data")
    return folder


def start(sdk: Path, utils: Path, name: str, guarded: bool) -> subprocess.Popen[bytes]:
    """One pytest run of the SDK's trace tests, writing ``build/peer-sdk/<name>.xml``."""
    ini = BUILD / "pytest.ini"
    ini.write_text("[pytest]\n", encoding="utf-8")  # not this repository's pytest settings
    paths = [str(utils / "src"), str(HERE)]
    arguments = [sys.executable, "-m", "pytest", SUITE, "-c", str(ini), "--rootdir", str(sdk),
                 "-p", "no:cacheprovider", "-p", "keep_sdk_classes", "-q",
                 f"--junitxml={BUILD / f'{name}.xml'}"]  # fmt: skip
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the same plugins in both runs
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python -c
    if guarded:
        paths.insert(0, str(ROOT))  # this checkout's groundplane_otel
        arguments += ["-p", "groundplane_everywhere"]
        env["GROUNDPLANE_PEER_SUMMARY"] = str(BUILD / "summary.json")
        env["GROUNDPLANE_PEER_NAME_ROOTS"] = str(utils / "src")
    env["PYTHONPATH"] = os.pathsep.join(paths)
    log = (BUILD / f"{name}.log").open("wb")
    return subprocess.Popen(arguments, cwd=sdk, env=env, stdout=log, stderr=subprocess.STDOUT)


def main() -> int:
    pinned = pin(SDK)
    if version(SDK) != pinned:
        print(f"peer-sdk: {SDK} {version(SDK)} is installed, constraints.txt pins {pinned}")
        return 1
    sdk, utils = sources(SDK), sources(TEST_UTILS)
    for stale in ("plain.xml", "guarded.xml", "summary.json"):
        (BUILD / stale).unlink(missing_ok=True)
    runs = [start(sdk, utils, "plain", False), start(sdk, utils, "guarded", True)]
    for run in runs:
        run.wait()
    plain, guarded = outcomes(BUILD / "plain.xml"), outcomes(BUILD / "guarded.xml")
    done = json.loads((BUILD / "summary.json").read_text(encoding="utf-8"))
    unexpected, stale = judge(differences(plain, guarded), load_allowlist(HERE / "allowlist.toml"))
    print(f"peer-sdk: {SDK}=={pinned} {SUITE}: {len(plain)} tests plain, {len(guarded)} guarded")
    print(f"peer-sdk: guarded run: {json.dumps(done, sort_keys=True)}")
    problems = [f"difference not in allowlist.toml: {line}" for line in unexpected]
    problems += [f"allowlist.toml entry that no longer differs: {test}" for test in stale]
    if not done["providers_guarded"] or not done["riding"] or not done["outputs_checked"]:
        problems.append("the guarded run guarded no provider, rode on none, or checked nothing")
    if done["internal_errors"]:
        problems.append(f"{done['internal_errors']} internal error(s) in the guarded run")
    for problem in problems:
        print(f"peer-sdk: FAIL {problem}")
    print("peer-sdk: ok" if not problems else f"peer-sdk: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
