from carve.flake8_plugin import CarveFlake8Plugin


def test_plugin_reports_findings_with_flake8_columns():
    lines = ["import torch\n", "@torch.compile\n", "def f(x):\n", "    print(x.sum())  # noqa: CRV003\n", "    return x\n"]
    results = list(CarveFlake8Plugin(None, "m.py", lines).run())
    # flake8 applies noqa itself, so the plugin still yields the finding
    assert [(line, col, message.split()[0]) for line, col, message, _ in results] == [(4, 4, "CRV003")]
