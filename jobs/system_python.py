"""Run a nestfast script under an interpreter that has Debian's modules.

python3-h5py, python3-matplotlib and python3-pandas install into Debian's
/usr/bin/python3. A different python3 first on PATH (pyenv, conda, a venv)
does not see them; require() then runs the script again under
/usr/bin/python3 when that one has them, and otherwise stops with one line
saying which interpreter and packages to use.
"""
import importlib
import os
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
PACKAGES = {"h5py": "python3-h5py", "matplotlib": "python3-matplotlib", "pandas": "python3-pandas",
            "numpy": "python3-numpy"}


def missing_modules(modules):
    missing = []
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def require(modules, script):
    """Return when `modules` import here; else re-exec `script` under Debian's python3 or exit."""
    missing = missing_modules(modules)
    if not missing:
        return
    # Not a path comparison: a venv's python3 links to /usr/bin/python3 yet
    # does not see Debian's modules. The probe decides; the variable stops a loop.
    if os.access(SYSTEM_PYTHON, os.X_OK) and not os.environ.get("NESTFAST_PYTHON_REEXEC"):
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import " + ", ".join(modules)], capture_output=True)
        if probe.returncode == 0:
            print(f"{os.path.basename(script)}: {sys.executable} lacks {', '.join(missing)}; running under "
                  f"{SYSTEM_PYTHON} (Debian's, which has them)", file=sys.stderr)
            os.environ["NESTFAST_PYTHON_REEXEC"] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, script] + sys.argv[1:])
    packages = " ".join(PACKAGES.get(m, m) for m in missing)
    sys.exit(f"{os.path.basename(script)}: {sys.executable} has no {', '.join(missing)}: run it with "
             f"{SYSTEM_PYTHON} after `apt-get install -y {packages}` (Debian 12), or install them for this python")
