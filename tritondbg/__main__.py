from tritondbg.cli import main

main()
