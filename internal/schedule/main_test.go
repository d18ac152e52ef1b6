package schedule

import (
	"flag"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	c := flag.Int("property.cases", propertyCases, "")
	sd := flag.Uint64("property.seed", propertySeed, "")
	flag.Parse()
	propertyCases, propertySeed = *c, *sd
	os.Exit(m.Run())
}
