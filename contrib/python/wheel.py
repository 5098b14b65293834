"""A PEP 517 build backend for the one-module helper: the wheel of
spyremon.py, made with the standard library alone.

pip calls build_wheel (and prepare_metadata_for_build_wheel); the name,
version and summary are pyproject.toml's [project] table's, read here so
that they are said once.  The wheel is pure Python (py3-none-any): the
module, and its dist-info with METADATA, WHEEL and RECORD (each file's
urlsafe-base64 sha256 and size, as the wheel format asks).
"""
import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = "spyremon.py"


def _project():
    """name, version, description and requires-python from pyproject.toml."""
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()
    table = text.split("[project]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([a-z-]+)\s*=\s*"([^"]*)"', table, re.M))


def _metadata():
    p = _project()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: %s\nProvides-Extra: profile\n"
            "Requires-Dist: torch; extra == \"profile\"\n"
            % (p["name"], p["version"], p["description"],
               p["requires-python"]))


def _distinfo():
    p = _project()
    return "%s-%s.dist-info" % (p["name"], p["version"])


WHEEL = ("Wheel-Version: 1.0\nGenerator: spyremon wheel.py\n"
         "Root-Is-Purelib: true\nTag: py3-none-any\n")


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d\n" % (name, digest.rstrip(b"=").decode(), len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _distinfo())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(WHEEL)
    return _distinfo()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    name = "%s-%s-py3-none-any.whl" % (p["name"], p["version"])
    files = [(MODULE, open(os.path.join(HERE, MODULE), "rb").read()),
             (_distinfo() + "/METADATA", _metadata().encode()),
             (_distinfo() + "/WHEEL", WHEEL.encode())]
    record = "".join(_record_line(n, d) for n, d in files)
    record += _distinfo() + "/RECORD,,\n"
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            z.writestr(n, d)
        z.writestr(_distinfo() + "/RECORD", record)
    os.replace(path + ".tmp", path)
    return name
