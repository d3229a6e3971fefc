"""The `ktrain` package itself (ktrain/__init__.py): `import ktrain` loads nothing else, its names are
loaded on first use, and `from ktrain import *` binds the SDK's names without ktrain's functions."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ktrain


def test_import_ktrain_stays_lazy_and_the_star_import_loads_the_python_api() -> None:
    probe = (
        "import sys, ktrain\n"
        "before = sorted(m for m in sys.modules if m.startswith('ktrain.'))\n"
        "from ktrain import *\n"
        "print(before, 'ktrain.python_api' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"


def test_the_python_api_is_reached_through_the_package() -> None:
    from ktrain import python_api
    from ktrain.python_api.status_report import update_trainjob_status

    for name in ("render", "validate", "train", "Client", "TrainerClient", "CustomTrainer", "TrainJob"):
        assert getattr(ktrain, name) is getattr(python_api, name), name
    assert ktrain.update_trainjob_status is update_trainjob_status


def test_the_sdks_subpackages_are_attributes_of_the_package() -> None:
    import ktrain.constants.constants as constants

    assert ktrain.constants.constants is constants
    assert ktrain.types.__name__ == "ktrain.types" and ktrain.options.__name__ == "ktrain.options"


def test_a_star_import_leaves_ktrains_own_functions_out() -> None:
    assert not {"render", "validate", "train"} & set(ktrain.__all__)
    assert {"Client", "KtrainWarning", "TrainerClient", "update_trainjob_status"} <= set(ktrain.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="module 'ktrain' has no attribute 'Trainer'"):
        ktrain.Trainer  # noqa: B018
    assert not hasattr(ktrain, "python_apis")


def test_dir_lists_the_lazy_names() -> None:
    names = dir(ktrain)
    assert {"render", "TrainerClient", "constants", "update_trainjob_status", "__version__"} <= set(names)
    assert names == sorted(names)
