import pytest

from harness import World


@pytest.fixture
def anyio_backend():
    return 'asyncio'


@pytest.fixture
def world(tmp_path):
    """A broker of the test's own in a temporary agent directory; at the end everything the
    test started is stopped, and no process it started may have panicked."""
    w = World(tmp_path)
    w.start_broker()
    yield w
    panics = w.stop()
    assert not panics, '\n'.join(panics)


@pytest.fixture
def bare_world(tmp_path):
    """The same without a broker: the first server starts one, as it would on a user's
    machine; it is stopped at the end."""
    w = World(tmp_path)
    yield w
    panics = w.stop()
    assert not panics, '\n'.join(panics)
