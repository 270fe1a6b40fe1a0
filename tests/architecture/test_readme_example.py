"""The README's Python example runs as written (every ``pycon`` block is a doctest)."""

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_examples_run_as_written():
    blocks = re.findall(r"```pycon\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python example"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README block {i}", str(README), 0)
        assert test.examples
        runner.run(test)
    assert runner.failures == 0, "a README example printed something else (see the output above)"
    assert runner.tries >= 5
