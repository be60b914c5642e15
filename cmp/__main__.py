from cmp.cli import main_exit

if __name__ == "__main__":
    main_exit()
