from cmp.cli import MODULE_PROG, main_exit

if __name__ == "__main__":
    main_exit(MODULE_PROG)
