package cli
import "github.com/spf13/cobra"
func (a *App) compareCmd() *cobra.Command { return &cobra.Command{Use: "compare"} }
