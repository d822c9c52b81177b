import pytest

from harness import start_default


@pytest.fixture(scope='module')
def service(tmp_path_factory):
    """One server per test module, on a fresh store."""
    svc = start_default(tmp_path_factory.mktemp('a2a'))
    yield svc
    alive = svc.alive()
    svc.stop()
    assert alive, 'the server died during the module: ' + ''.join(svc.stderr_lines[-20:])
