"""``python -m cmp``: the command line under that name."""

from cmp.cli import module_exit

if __name__ == "__main__":
    module_exit()
